"""A causal mask built on the host in `forward` and moved to `self.cpu_dev`, which the class binds to
`torch.device("cuda")`: what the attribute holds decides where the copy goes, not the word "cpu" in its name (bad)."""
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.cpu_dev = torch.device("cuda")

    def forward(self, x):
        n = x.size(1)
        mask = torch.ones(n, n).tril().to(self.cpu_dev)  # expect: SF205
        return self.proj(x).masked_fill(mask == 0, 0.0)
