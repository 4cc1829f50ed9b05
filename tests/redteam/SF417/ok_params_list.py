"""A parameter list built once before the loop."""
import torch


def train(model, loader, optimizer, criterion):
    params = list(model.parameters())
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
