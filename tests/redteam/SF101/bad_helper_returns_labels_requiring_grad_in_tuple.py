"""A batch helper returns its labels made to require grad inside the returned tuple."""
import torch
import torch.nn as nn


def to_tensors(batch):
    return torch.tensor(batch["x"]), torch.tensor(batch["y"], requires_grad=True)


def train(net, batches, optimizer):
    objective = nn.MSELoss()
    for batch in batches:
        x, y = to_tensors(batch)
        loss = objective(net(x), y)  # expect: SF101
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

