"""A temperature kept as a plain tensor made to require grad with .requires_grad_()."""
import torch
import torch.nn as nn


class Calibrated(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.temperature = torch.ones(1).requires_grad_()  # expect: SF413

    def forward(self, x):
        return self.net(x) / self.temperature
