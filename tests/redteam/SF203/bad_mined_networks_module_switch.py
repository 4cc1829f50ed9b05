"""Mined shape (cross-file in the original): a networks module turns anomaly detection on at import, above its block and generator classes; training lives in another file (bad)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.autograd.set_detect_anomaly(True)  # expect: SF203


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return x + self.conv2(F.relu(self.conv1(x)))


class Generator(nn.Module):
    def __init__(self, channels=64, blocks=4):
        super().__init__()
        self.body = nn.Sequential(*[ResidualBlock(channels) for _ in range(blocks)])

    def forward(self, x):
        return self.body(x)
