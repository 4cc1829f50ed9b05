"""The validation pass hands `run_epoch` an instance of another file's loss class, which it calls; its `__call__`
runs a backward."""
from losses import LossCompute


def run_epoch(batches, model, loss_compute):
    total = 0.0
    for batch in batches:
        total += loss_compute(model(batch.src), batch.tgt_y, batch.ntokens)
    return total


for epoch in range(10):
    model.train()
    for batch in train_batches:
        loss = criterion(model(batch.src), batch.tgt)
        loss.backward()
        opt.step()
        opt.zero_grad()
    model.eval()
    print(run_epoch(val_batches, model, LossCompute(model.generator, criterion)))  # expect: SF419
