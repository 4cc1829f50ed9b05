"""Mined (stochastic gates module): one parameter set from a dict literal whose key the code names."""
import torch
import torch.nn as nn


class Gates(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.mu = nn.Parameter(torch.zeros(n))
        self.register_buffer("temperature", torch.ones(1))

    @classmethod
    def from_mu(cls, mu):
        gates = cls(mu.numel())
        gates.load_state_dict({"mu": mu}, strict=False)
        return gates
