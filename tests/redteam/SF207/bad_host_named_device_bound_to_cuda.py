"""A constant table kept as a plain tensor attribute and moved to `self.host_dev` on every forward; the class binds
`self.host_dev` to `torch.device("cuda", 0)`, so each call copies the table to the accelerator (bad)."""
import torch
import torch.nn as nn


class Scaler(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)
        self.scale = torch.linspace(0.5, 1.5, dim)
        self.host_dev = torch.device("cuda", 0)

    def forward(self, x):
        return self.lin(x) * self.scale.to(self.host_dev)  # expect: SF207
