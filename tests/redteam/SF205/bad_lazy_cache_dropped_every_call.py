"""Near miss of a lazy init: the cache is emptied again at the end of every forward, so the guarded body (a host
factory then a move) runs on every call."""
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self.buffer = None
        self.fc = nn.Linear(n, n)

    def forward(self, x):
        if self.buffer is None:
            self.buffer = torch.zeros(x.size(0), self.n).to(x.device)  # expect: SF205
        out = self.fc(x) + self.buffer
        self.buffer = None
        return out
