"""Mined (expert-gating module): its `train_step` method builds an Adam over `self.parameters()` on every call from the update loop."""
import torch
from torch import nn, optim


class ExpertGate(nn.Module):
    def __init__(self, dim, n_experts):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, 64), nn.ReLU(), nn.Linear(64, n_experts))

    def forward(self, x):
        return self.mlp(x)

    def train_step(self, x, target):
        opt = optim.Adam(self.parameters(), lr=0.001)  # expect: SF408
        opt.zero_grad()
        loss = nn.functional.cross_entropy(self(x), target)
        loss.backward()
        opt.step()
        return loss.item()


def fit_gate(gate, pairs):
    for x, target in pairs:
        gate.train_step(x, target)
