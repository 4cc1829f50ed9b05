"""Undo on one named layer's weight (`head.weight.data += lr * head.weight.grad`) after an RMSprop step (bad)."""
import torch
from torch import optim as O


def train(model, loader, loss_fn, lr=1e-3):
    opt = O.RMSprop(model.parameters(), lr=lr, momentum=0.9)
    for x, y in loader:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
        if model.head.weight.norm() > 100:
            model.head.weight.data += lr * model.head.weight.grad  # expect: SF402
            model.head.bias.data += lr * model.head.bias.grad  # expect: SF402
