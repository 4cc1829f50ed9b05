"""A LayerScale-style residual wrapper: one weight of its own, full training is intended."""
import torch
from torch import nn


class LayerScale(nn.Module):
    def __init__(self, fn, dim, init=1e-5):
        super().__init__()
        self.fn = fn
        self.gamma = nn.Parameter(init * torch.ones(dim))

    def forward(self, x):
        return x + self.gamma * self.fn(x)


def build(blocks, dim):
    model = nn.Sequential(*[LayerScale(b, dim) for b in blocks])
    return model, torch.optim.AdamW(model.parameters(), lr=1e-3)
