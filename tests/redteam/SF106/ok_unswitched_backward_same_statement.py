"""Near miss: a helper's returned sum is backpropagated in the same statement."""
import torch


def collect(model, batches):
    total = 0
    for x in batches:
        total = total + model(x).sum()
    return total


def train(model, loader, optimizer):
    for batches in loader:
        optimizer.zero_grad()
        (collect(model, batches) / len(batches) + model(batches[0]).sum()).backward()
        optimizer.step()
