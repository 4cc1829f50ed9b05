"""A transformer block calling a module-level residual helper that drops the branch output."""
import torch.nn as nn
import torch.nn.functional as F


def residual(x, branch, p):
    return x + F.dropout(branch, p)  # expect: SF414


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Linear(dim, dim)

    def forward(self, x):
        return residual(x, self.ff(self.norm(x)), 0.1)
