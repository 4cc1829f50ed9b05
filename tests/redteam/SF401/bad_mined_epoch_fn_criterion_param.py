"""Mined (checkpointing trainer): `train_one_epoch` takes the criterion as a parameter and calls it on the outputs twice."""


def train_one_epoch(epoch, loader, model, criterion, optimizer):
    for step, batch in enumerate(loader):
        optimizer.zero_grad()
        preds = model(batch)
        loss = criterion(preds, preds)  # expect: SF401
        loss.backward()
        optimizer.step()
        if step % 10 == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
