"""Discriminator with a held `nn.Sigmoid` and `nn.BCELoss` (correct: BCELoss wants probabilities)."""
import torch.nn as nn


class D(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(64, 1)
        self.out = nn.Sigmoid()

    def forward(self, x):
        return self.out(self.net(x))


disc = D()
criterion = nn.BCELoss()
loss_real = criterion(disc(real).view(-1), torch.ones(len(real)))
