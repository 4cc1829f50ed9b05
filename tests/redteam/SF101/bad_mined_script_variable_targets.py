"""Mined shape: a module-level training script wraps inputs and targets in Variable(..., requires_grad=True) inside the batch loop and hands the targets to MSELoss (bad)."""
import torch
from torch import nn
from torch.autograd import Variable

net = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(net.parameters(), lr=1e-2)
batches = [(torch.randn(8, 6), torch.randn(8, 1)) for _ in range(4)]

for epoch in range(3):
    running = 0.0
    for features, goal in batches:
        features = Variable(features, requires_grad=True)
        goal = Variable(goal, requires_grad=True)  # expect: SF101
        optimizer.zero_grad()
        guess = net(features)
        loss = criterion(guess, goal)
        running += loss.item() / len(batches)
        loss.backward()
        optimizer.step()
