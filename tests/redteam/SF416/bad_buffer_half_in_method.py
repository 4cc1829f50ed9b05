"""A module casting its registered buffer to half precision in a helper method without rebinding it."""
import torch
from torch import nn


class RotaryCache(nn.Module):
    def __init__(self, dim):
        super().__init__()
        inv = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv)

    def to_half(self):
        self.inv_freq.half()  # expect: SF416

    def forward(self, t):
        return torch.outer(t, self.inv_freq)
