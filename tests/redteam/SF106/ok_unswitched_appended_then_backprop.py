"""Near miss: a helper's returned sum is appended to a list that is then differentiated."""
import torch


def collect(model, batches):
    total = 0
    for x in batches:
        total = total + model(x).sum()
    return total


def train(model, loader, optimizer):
    for batches in loader:
        losses = []
        losses.append(collect(model, batches))
        loss = torch.stack(losses).mean() + model(batches[0]).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
