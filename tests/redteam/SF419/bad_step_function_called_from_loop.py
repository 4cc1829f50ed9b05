"""The training step is its own function (clears after stepping); the epoch loop evaluates with a backward in between."""
import torch


def train_step(model, batch, optimizer):
    loss = model.loss(batch)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()


def main(model, optimizer, train_batches, val_batches):
    for epoch in range(20):
        for batch in train_batches:
            train_step(model, batch, optimizer)
        model.eval()
        val = [model.loss(b) for b in val_batches]
        total = torch.stack(val).mean()
        total.backward()  # expect: SF419
        print(epoch, total.item())
        model.train()
