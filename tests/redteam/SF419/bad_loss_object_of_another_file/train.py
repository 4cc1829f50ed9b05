"""The validation pass calls an instance of another file's loss class; its `__call__` runs a backward."""
from losses import LossCompute


for epoch in range(10):
    model.train()
    for batch in train_batches:
        loss = criterion(model(batch.src), batch.tgt)
        loss.backward()
        opt.step()
        opt.zero_grad()
    model.eval()
    measure = LossCompute(model.generator, criterion)
    print(measure(model(val.src), val.tgt, 1.0))  # expect: SF419
