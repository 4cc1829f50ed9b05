"""MNIST-style script: a CNN, a shuffling loader, dropout; train() behind the main guard, no seed."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 32, 3)
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(5408, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.drop(F.relu(self.conv(x))), 1))


def train(model, loader, optimizer):
    model.train()
    for data, target in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data), target)
        loss.backward()
        optimizer.step()


def main():
    loader = DataLoader(train_set, batch_size=64, shuffle=True)
    model = Net()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    for epoch in range(10):
        train(model, loader, optimizer)


if __name__ == "__main__":  # expect: SF420
    main()
