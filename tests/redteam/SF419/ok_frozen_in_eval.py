"""The evaluated model is frozen (requires_grad_(False)) while the input gradient is taken."""
import torch


def sensitivity(model, x):
    model.eval().requires_grad_(False)
    x = x.clone().requires_grad_(True)
    model(x).sum().backward()
    model.requires_grad_(True).train()
    return x.grad


def train(model, loader, optimizer):
    for x, y in loader:
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()
