"""The plain model keeps its own name; the wrapper only runs the forward."""
import torch
import torch.nn as nn


def train(loader, optimizer, path):
    base = nn.Linear(8, 1)
    parallel = nn.DataParallel(base)
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(parallel(x), y).backward()
        optimizer.step()
    torch.save(base.state_dict(), path)
