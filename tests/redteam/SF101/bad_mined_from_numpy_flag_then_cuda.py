"""Mined shape: module-level regression loop: targets from torch.from_numpy get `.requires_grad = True`, then move to the GPU only behind an `if`, then go to the criterion (bad)."""
import numpy as np
import torch
from torch import nn

use_gpu = torch.cuda.is_available()
line = nn.Linear(1, 1)
if use_gpu:
    line = line.cuda()
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(line.parameters(), lr=0.01)
xs = np.arange(20, dtype=np.float32).reshape(-1, 1)
ys = (3 * xs + 1).astype(np.float32)

for epoch in range(100):
    inputs = torch.from_numpy(xs)
    if use_gpu:
        inputs = inputs.cuda()
    targets = torch.from_numpy(ys)
    targets.requires_grad = True  # expect: SF101
    if use_gpu:
        targets = targets.cuda()
    optimizer.zero_grad()
    loss = criterion(line(inputs), targets)
    loss.backward()
    optimizer.step()
