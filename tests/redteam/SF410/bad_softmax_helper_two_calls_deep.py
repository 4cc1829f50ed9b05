"""A softmax helper reached through another helper feeds CrossEntropyLoss."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def normalised(logits):
    return F.softmax(logits, dim=1)


def head_output(net, x):
    return normalised(net(x))


def train(net, batches, optimizer):
    objective = nn.CrossEntropyLoss()
    for x, y in batches:
        loss = objective(head_output(net, x), y)  # expect: SF410
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
