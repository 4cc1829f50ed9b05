"""Prototypes kept in an nn.ParameterList and a gain as nn.Parameter."""
import torch
from torch import nn


class ProtoNet(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.prototypes = nn.ParameterList([nn.Parameter(torch.randn(d)) for _ in range(n)])
        self.gain = nn.Parameter(torch.ones(1, requires_grad=True))

    def forward(self, z):
        return torch.stack([(z - p).pow(2).sum(-1) for p in self.prototypes], -1) * self.gain
