"""Class prototypes kept as a plain list of nn.Parameter."""
import torch
from torch import nn


class ProtoNet(nn.Module):
    def __init__(self, encoder, n_classes, dim):
        super().__init__()
        self.encoder = encoder
        self.prototypes = [nn.Parameter(torch.randn(dim)) for _ in range(n_classes)]  # expect: SF413

    def forward(self, x):
        z = self.encoder(x)
        return torch.stack([-(z - p).pow(2).sum(-1) for p in self.prototypes], -1)
