"""Mined (regression tutorial script): module-level loop with backward, zero_grad, step in that order."""
import torch
from torch import nn, optim

net = nn.Linear(4, 1)
mse = nn.MSELoss()
sgd = optim.SGD(net.parameters(), lr=0.01)
xs, ys = torch.randn(32, 4), torch.randn(32, 1)

for epoch in range(100):
    pred = net(xs)
    err = mse(pred, ys)
    err.backward()
    sgd.zero_grad()  # expect: SF405
    sgd.step()
