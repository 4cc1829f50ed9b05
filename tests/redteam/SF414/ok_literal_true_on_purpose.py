"""A graph encoder that keeps dropout on at inference on purpose: `training=True` is passed, a choice (MC dropout)."""
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, dim, p=0.2):
        super().__init__()
        self.p = p
        self.lin1 = nn.Linear(dim, dim)
        self.lin2 = nn.Linear(dim, dim)

    def forward(self, x):
        x = F.elu(self.lin1(x))
        x = F.dropout(x, p=self.p, training=True)
        return self.lin2(x)
