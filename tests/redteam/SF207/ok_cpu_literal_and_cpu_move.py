"""A literal on the CPU and a move to the CPU in forward."""
import torch
import torch.nn as nn


class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.history = torch.zeros(4)

    def forward(self, x):
        zero = torch.tensor(0.0, device="cpu")
        self.history = self.history.cpu()
        return self.lin(x) + zero.item()
