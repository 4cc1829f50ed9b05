"""Paraphrase of a common mined shape (5 of 10 hits of one spelling): a sinusoidal table filled in
__init__ and kept as a plain attribute, sliced and moved to the input's device in every forward."""
import math

import torch
import torch.nn as nn


class SinusoidalPositions(nn.Module):
    def __init__(self, width, longest=2048):
        super().__init__()
        table = torch.zeros(longest, width)
        steps = torch.arange(longest, dtype=torch.float).unsqueeze(1)
        freq = torch.exp(torch.arange(0, width, 2).float() * (-math.log(10000.0) / width))
        table[:, 0::2] = torch.sin(steps * freq)
        table[:, 1::2] = torch.cos(steps * freq)
        self.table = table.unsqueeze(0)

    def forward(self, h):
        return h + self.table[:, : h.size(1)].to(h.device)  # expect: SF207
