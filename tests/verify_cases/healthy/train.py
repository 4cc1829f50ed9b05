"""A small, healthy MLP regression step (used by the verify tests)."""

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.head = nn.Linear(64, 1)

    def forward(self, x):
        return self.head(self.body(x))


def build_verify(device):
    model = MLP().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(64, 32, device=device)
    y = torch.randn(64, 1, device=device)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    return model, opt, step
