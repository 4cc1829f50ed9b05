"""A step helper takes the optimizer as a short-named argument (`opt`) and never clears it."""
import torch
from torch import nn


def make():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    return model, opt


def train_step(model, opt, x, y):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()  # expect: SF404
    return loss.detach()


def train(loader):
    model, opt = make()
    for x, y in loader:
        train_step(model, opt, x, y)


def build_verify(device):
    model, opt = make()
    model.to(device)
    x = torch.randn(64, 32, device=device)
    y = torch.randn(64, 1, device=device)
    return model, opt, lambda: train_step(model, opt, x, y)
