"""Rotary tables computed once in `__init__` as plain attributes and moved in every forward, in a module whose
methods call their instance `this`: the table is the instance's whatever the receiver is called (bad)."""
import torch
import torch.nn as nn


class Rotary(nn.Module):
    def __init__(this, dim, max_len):
        super().__init__()
        inv = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        this.cos = torch.outer(torch.arange(max_len).float(), inv).cos()

    def forward(this, x):
        n = x.size(1)
        return x * this.cos[:n].to(x.device)  # expect: SF207
