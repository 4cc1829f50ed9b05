"""`__init__` has an `if` block before the plain table attribute (this shape crashed SF207's fix before); the table is copied in every forward."""
import torch
from torch import nn


class TextEncoder(nn.Module):
    def __init__(self, vocab, dim, use_bias=True):
        super().__init__()
        if use_bias:
            self.proj = nn.Linear(dim, dim)
        else:
            self.proj = nn.Linear(dim, dim, bias=False)
        self.position_ids = torch.arange(vocab).expand((1, -1))

    def forward(self, h):
        ids = self.position_ids.to(h.device)  # expect: SF207
        return self.proj(h) + ids[..., None].float()
