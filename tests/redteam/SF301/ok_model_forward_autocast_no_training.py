"""Model forward autocast no training (must stay silent)."""
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            return self.proj(x)
