"""A method builds a sub-module kept on self; moving a module is not a host tensor copy."""
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.head = self._build_head(d)

    def _build_head(self, d):
        return nn.Sequential(nn.Linear(d, d), nn.ReLU())

    def forward(self, x):
        return self.head.to(x.device)(x)
