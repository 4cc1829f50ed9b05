"""Decoupled weight decay applied by hand (`p.mul_(1 - lr * wd)`) before the optimizer step: no gradient math, and before the step."""
import torch


def train(model, loader, loss_fn, lr=1e-3, wd=0.05):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for x, y in loader:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        with torch.no_grad():
            for p in model.parameters():
                if p.ndim > 1:
                    p.mul_(1 - lr * wd)
        optimizer.step()
