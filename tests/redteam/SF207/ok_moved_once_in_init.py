"""The attribute is built on the device in __init__."""
import torch
import torch.nn as nn


class Scaler(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.scale = torch.ones(8, device=device)

    def forward(self, x):
        return x * self.scale.to(x.device)
