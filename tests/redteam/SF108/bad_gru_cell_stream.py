"""GRUCell over a sensor stream, an update per reading, the state never cut (bad)."""
import torch
from torch import nn

cell = nn.GRUCell(8, 32)
head = nn.Linear(32, 1)
opt = torch.optim.SGD(list(cell.parameters()) + list(head.parameters()), lr=0.01)
h = torch.zeros(1, 32)
for reading, target in stream:
    h = cell(reading, h)  # expect: SF108
    loss = (head(h) - target).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
