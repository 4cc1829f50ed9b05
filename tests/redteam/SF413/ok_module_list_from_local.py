"""A local list of layers wrapped in nn.ModuleList before it is stored."""
import torch.nn as nn


class Stack(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        layers = []
        for _ in range(n):
            layers.append(nn.Linear(d, d))
        self.layers = nn.ModuleList(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
