"""Builds a sinusoidal table in host memory."""
import math

import torch


def sinusoid_table(length, dim):
    position = torch.arange(length).unsqueeze(1).float()
    scale = torch.exp(torch.arange(0, dim, 2).float() * (-math.log(10000.0) / dim))
    table = torch.zeros(length, dim)
    table[:, 0::2] = torch.sin(position * scale)
    table[:, 1::2] = torch.cos(position * scale)
    return table
