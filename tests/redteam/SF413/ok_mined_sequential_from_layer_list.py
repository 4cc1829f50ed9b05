"""Mined (coordinate MLP): layers gathered in a list attribute, then registered through nn.Sequential(*self.layers)."""
from torch import nn


class CoordMLP(nn.Module):
    def __init__(self, n_layers=4, hidden=256, n_in=2, n_out=3):
        super().__init__()
        self.layers = [nn.Linear(n_in, hidden), nn.ReLU(True)]
        for i in range(n_layers - 1):
            self.layers.append(nn.Linear(hidden, hidden))
            self.layers.append(nn.ReLU(True))
        self.layers.append(nn.Linear(hidden, n_out))
        self.net = nn.Sequential(*self.layers)

    def forward(self, x):
        return self.net(x)
