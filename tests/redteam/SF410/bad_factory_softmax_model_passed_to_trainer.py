"""A factory builds a model ending in a softmax; the trainer it is handed to feeds CrossEntropyLoss."""
import torch.nn as nn


def build_model():
    return nn.Sequential(nn.Linear(16, 4), nn.Softmax(dim=1))


def train(net, batches, optimizer):
    objective = nn.CrossEntropyLoss()
    for x, y in batches:
        loss = objective(net(x), y)  # expect: SF410
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(batches):
    net = build_model()
    optimizer = None
    train(net, batches, optimizer)
