"""Mined (dereverberation net): a plain list of layers, re-bound as nn.ModuleList(self.Layers) right after."""
import torch.nn as nn


class Dereverb(nn.Module):
    def __init__(self):
        super().__init__()
        self.Layers = [nn.Linear(420, 840), nn.Linear(840, 840), nn.Dropout(0.4), nn.Linear(840, 420)]
        self.Layers = nn.ModuleList(self.Layers)

    def forward(self, x):
        for layer in self.Layers:
            x = layer(x)
        return x
