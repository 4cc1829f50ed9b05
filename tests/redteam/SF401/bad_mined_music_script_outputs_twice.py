"""Mined (music sequence script): module-level full-batch loop, `criterion(outputs, outputs)` where a target was meant."""
import torch
from torch import nn, optim

measures = torch.randn(32, 16)
net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 16))
loss_fn = nn.MSELoss()
adam = optim.Adam(net.parameters(), lr=0.001)

for epoch in range(10):
    pred = net(measures)
    loss = loss_fn(pred, pred)  # expect: SF401
    adam.zero_grad()
    loss.backward()
    adam.step()
