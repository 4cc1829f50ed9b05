"""Moved once before the loop; the loop reuses the device copy."""
import torch

WEIGHTS = torch.tensor([1.0, 2.0])


def train(model, loader, optimizer, device):
    weights = WEIGHTS.to(device)
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device), weight=weights)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
