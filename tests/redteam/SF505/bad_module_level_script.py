"""A module-level script: the wrap and the save both at the top level."""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
net = nn.DataParallel(net).cuda()
optimizer = torch.optim.Adam(net.parameters())
for step in range(100):
    x = torch.randn(16, 32).cuda()
    loss = net(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
torch.save(net.state_dict(), "net.pt")  # expect: SF505
