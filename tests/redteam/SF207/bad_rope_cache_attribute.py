"""Rotary tables computed once in __init__ as plain attributes, moved in every forward."""
import torch
import torch.nn as nn


class Rotary(nn.Module):
    def __init__(self, dim, max_len):
        super().__init__()
        inv = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        freqs = torch.outer(torch.arange(max_len).float(), inv)
        self.cos = freqs.cos()
        self.sin = freqs.sin()

    def forward(self, x):
        n = x.size(1)
        cos = self.cos[:n].to(x.device)  # expect: SF207
        sin = self.sin[:n].to(x.device)  # expect: SF207
        return x * cos + x.roll(1, -1) * sin
