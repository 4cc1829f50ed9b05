"""The forward stores the moved copy back on the attribute: it is copied once, later moves are no-ops."""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, n, dim):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.mask = torch.triu(torch.ones(n, n), diagonal=1).bool()

    def forward(self, x):
        self.mask = self.mask.to(x.device)
        return self.attn(x, x, x, attn_mask=self.mask)[0]


class Pruned(nn.Module):
    def __init__(self, weight):
        super().__init__()
        self.weight = nn.Parameter(weight)
        self.mask = torch.ones_like(weight)

    def forward(self, x):
        if self.mask.device != x.device:
            self.mask = self.mask.to(x.device)
        return x @ (self.weight * self.mask).T
