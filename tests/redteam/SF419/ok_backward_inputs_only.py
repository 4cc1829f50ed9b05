"""backward(inputs=[x]) accumulates into x only, not into the parameters."""
import torch


def sensitivity(model, x):
    model.eval()
    x = x.clone().requires_grad_(True)
    model(x).sum().backward(inputs=[x])
    model.train()
    return x.grad


def train(model, loader, optimizer):
    for x, y in loader:
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()
