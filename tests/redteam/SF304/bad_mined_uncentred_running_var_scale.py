"""Mined (multi-agent observation encoder): continuous features divided by sqrt(running_var + 1e-8) without centring, a scale of other data."""
import torch
from torch import nn


class IsotropicScaler(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("running_var", torch.ones(()))
        self.dim = dim

    def forward(self, feats):
        cont = feats[:, : self.dim]
        scaled = cont / torch.sqrt(self.running_var + 1e-8)  # expect: SF304
        return torch.cat([scaled, feats[:, self.dim :]], dim=1)
