"""Layers registered under their own attributes, and also listed (by the same local names) for iteration."""
import torch.nn as nn


class EncDec(nn.Module):
    def __init__(self, d):
        super().__init__()
        enc = nn.Linear(d, d)
        dec = nn.Linear(d, d)
        self.enc = enc
        self.dec = dec
        self.parts = [enc, dec]

    def forward(self, x):
        for part in self.parts:
            x = part(x)
        return x
