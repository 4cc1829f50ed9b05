"""Eval mode spelled train(False); the validation loss is backpropagated with autograd.backward."""
import torch

for epoch in range(100):
    model.train(True)
    for x, y in train_loader:
        loss = loss_fn(model(x), y)
        loss.backward()
        optim.step()
        optim.zero_grad()
    model.train(False)
    for x, y in val_loader:
        val = loss_fn(model(x), y)
        torch.autograd.backward(val)  # expect: SF419
