"""The helper returns probabilities on one path only: the loss input is not known."""
import torch.nn as nn
import torch.nn.functional as F


def head_output(net, x, normalize=False):
    if normalize:
        return F.softmax(net(x), dim=1)
    return net(x)


def train(net, batches, optimizer):
    objective = nn.CrossEntropyLoss()
    for x, y in batches:
        loss = objective(head_output(net, x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
