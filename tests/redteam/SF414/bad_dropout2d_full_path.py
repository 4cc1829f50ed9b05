"""A segmentation decoder calling `dropout2d` through `torch.nn.functional` in full, with no `training`."""
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x):
        return torch.nn.functional.dropout2d(self.conv(x), 0.1)  # expect: SF414
