"""Mined shape: a gradient-matching method builds a zeros_like of the flattened parameter vector and adds the
concatenated gradient of every batch of a loader into it, returning the average (bad)."""
import torch
from torch.nn.utils import parameters_to_vector


class GradientMatcher:
    def __init__(self, model, loss, device):
        self.model = model
        self.loss = loss
        self.device = device

    def mean_gradient(self, loader):
        flat = parameters_to_vector(p for p in self.model.parameters() if p.requires_grad)
        pm = torch.zeros_like(flat)  # expect: SF105
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            self.model.zero_grad()
            self.loss(self.model(x), y).backward()
            pm += torch.cat([p.grad.view(-1) for p in self.model.parameters() if p.requires_grad], dim=0)
        return (pm / len(loader)).norm().item()
