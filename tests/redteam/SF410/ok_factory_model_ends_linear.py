"""The factory builds a model whose last layer is linear."""
import torch.nn as nn


def build_model():
    return nn.Sequential(nn.Linear(16, 4), nn.ReLU(), nn.Linear(4, 4))


def train(net, batches, optimizer):
    objective = nn.CrossEntropyLoss()
    for x, y in batches:
        loss = objective(net(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(batches):
    net = build_model()
    optimizer = None
    train(net, batches, optimizer)
