"""A subclass of the other file's base keeps its blocks in a list grown by extend."""
import torch.nn as nn

from base import BaseNet


class Deep(BaseNet):
    def __init__(self, d, n):
        super().__init__()
        self.blocks = []  # expect: SF413
        for _ in range(n):
            self.blocks.extend([nn.Linear(d, d), nn.LayerNorm(d)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x
