"""Tensors built once at setup: module level, __init__, a script's preamble before the loop."""
import torch
import torch.nn as nn

CLASS_WEIGHTS = torch.tensor([1.0, 3.0]).cuda()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.register_buffer("pos", torch.arange(32).cuda())

    def forward(self, x):
        return self.fc(x)


def train(model, loader, optimizer):
    weights = torch.ones(2).cuda()
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y, weight=weights)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
