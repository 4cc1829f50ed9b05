"""The evaluation comes after the training loop, not inside it."""
import torch
import torch.nn.functional as F


def fit(model, loader, val_loader, opt, epochs):
    model.train()
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        return [model(x) for x, _ in val_loader]
