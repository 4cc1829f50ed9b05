"""Constant tensors (no grad) kept as plain attributes and as a registered buffer."""
import torch
import torch.nn as nn


class Normalize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean).view(1, -1, 1, 1))
        self.eps = torch.tensor(1e-6)
        self.std = torch.tensor(std).view(1, -1, 1, 1)

    def forward(self, x):
        return (x - self.mean) / (self.std + self.eps)
