"""A host constant copied to the device only while the cached copy is still missing: once per object."""
import torch
from torch import nn


class Normalize(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
        self.mean_on_device = None
        self.conv = nn.Conv2d(3, 8, 3)

    def forward(self, x):
        if self.mean_on_device is None:
            self.mean_on_device = self.mean.to(x.device)
        return self.conv(x - self.mean_on_device)
