"""Labels made to require grad in a loader helper, returned through a second helper."""
import torch
import torch.nn as nn


def fetch(batch):
    inputs = torch.tensor(batch["x"])
    labels = torch.tensor(batch["y"], requires_grad=True)
    return inputs, labels


def to_tensors(batch):
    return fetch(batch)


def train(net, batches, optimizer):
    objective = nn.MSELoss()
    for batch in batches:
        x, y = to_tensors(batch)
        loss = objective(net(x), y)  # expect: SF101
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
