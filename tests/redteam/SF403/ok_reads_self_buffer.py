"""A checkpointed method that only reads a buffer of the module."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class PosBlock(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.register_buffer("pos", torch.randn(n, d))
        self.fc = nn.Linear(d, d)

    def _body(self, x):
        return self.fc(x + self.pos[: x.shape[1]])

    def forward(self, x):
        return checkpoint(self._body, x, use_reentrant=False)
