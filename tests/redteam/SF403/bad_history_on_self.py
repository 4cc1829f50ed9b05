"""A checkpointed method that records every intermediate on the module."""
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Probe(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))
        self.history = []

    def _run(self, x):
        y = self.body(x)
        self.history.append(y.detach())
        return y

    def forward(self, x):
        return checkpoint(self._run, x, use_reentrant=False)  # expect: SF403
