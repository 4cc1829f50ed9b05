"""ok accumulate then backward every k."""
import torch


def train(model, loader, optimizer, criterion, k):
    pending = []
    for i, (x, y) in enumerate(loader):
        pending.append(criterion(model(x), y))
        if len(pending) == k:
            torch.stack(pending).mean().backward()
            optimizer.step()
            optimizer.zero_grad()
            pending = []
