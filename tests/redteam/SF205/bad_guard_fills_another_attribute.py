"""Near miss of a lazy init: the guard tests one attribute but the body fills another, so the test stays true
and the host factory and its move run on every call."""
import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k
        self.table = {}
        self.last = None
        self.fc = nn.Linear(k, k)

    def forward(self, x):
        if self.table == {}:
            self.last = torch.zeros(self.k).to(x.device)  # expect: SF205
        return self.fc(x) + self.last
