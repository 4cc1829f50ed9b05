"""Mined (factorised SSL model): a dict that only indexes heads already registered as attributes."""
import torch.nn as nn


class Factorised(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.spatial_head = nn.Linear(d, d)
        self.colour_head = nn.Linear(d, d)
        self.heads = {"spatial": self.spatial_head, "colour": self.colour_head}

    def forward(self, x, which):
        return self.heads[which](x)
