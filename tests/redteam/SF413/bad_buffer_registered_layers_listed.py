"""A module registers a buffer by hand, but its layers still sit in a plain list."""
import torch
import torch.nn as nn


class PosMLP(nn.Module):
    def __init__(self, d, n, length):
        super().__init__()
        self.register_buffer("positions", torch.arange(length).float())
        self.layers = [nn.Linear(d, d) for _ in range(n)]  # expect: SF413

    def forward(self, x):
        x = x + self.positions[: x.shape[1], None]
        for layer in self.layers:
            x = layer(x)
        return x
