"""Mined shape: a graph-classification script's test(loader) puts the module-level model in eval mode and runs it over every batch with autograd on (bad)."""
import torch
from torch import nn


class GraphNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(16, 2)

    def forward(self, data):
        return self.head(data.x.mean(0, keepdim=True))


model = GraphNet()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)


def train(loader):
    model.train()
    total = 0.0
    for data in loader:
        loss = criterion(model(data), data.y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        total += loss.item()
    return total / len(loader)


def test(loader):
    model.eval()
    correct = 0
    for data in loader:
        out = model(data)  # expect: SF106
        correct += int((out.argmax(dim=1) == data.y).sum())
    return correct / len(loader.dataset)
