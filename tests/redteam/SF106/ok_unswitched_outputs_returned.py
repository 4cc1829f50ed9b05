"""Near miss: a helper collects the model's outputs in a list it returns; the caller differentiates their mean."""
import torch


def collect(model, batches):
    outs = []
    for x in batches:
        outs.append(model(x))
    return outs


def train(model, loader, optimizer):
    for batches in loader:
        outs = collect(model, batches)
        loss = torch.stack(outs).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
