"""Mined (variational graph RNN script): module-level epoch loop on one sequence, `nn.utils.clip_grad_norm_` after the step."""
import torch
from torch import nn

clip = 10
net = nn.GRU(8, 16)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
seq = torch.randn(12, 1, 8)

for k in range(300):
    optimizer.zero_grad()
    out, _ = net(seq)
    nll = out.pow(2).mean()
    loss = nll
    loss.backward()
    optimizer.step()
    nn.utils.clip_grad_norm_(net.parameters(), clip)  # expect: SF406
