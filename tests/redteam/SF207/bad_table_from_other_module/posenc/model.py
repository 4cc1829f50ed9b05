"""The encoder keeps the helper's host table as a plain attribute and copies it to the device in every forward."""
import torch.nn as nn

from posenc.tables import sinusoid_table


class Encoder(nn.Module):
    def __init__(self, length, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.table = sinusoid_table(length, dim)

    def forward(self, x):
        return self.proj(x + self.table[: x.size(1)].to(x.device))  # expect: SF207
