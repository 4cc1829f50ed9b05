"""Mined (camera calibration script): module-level loop over batches, a new Adam on the network each iteration."""
import torch
from torch import nn, optim

LR = 0.0001
net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 2))
loss_fn = nn.MSELoss()
batches = [(torch.randn(4, 3, 32, 32), torch.randn(4, 2)) for _ in range(10)]

for epoch, (feature, label) in enumerate(batches):
    optimizer = optim.Adam(net.parameters(), lr=LR)  # expect: SF408
    predicted = net(feature)
    loss = loss_fn(predicted, label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
