"""Mined (a benchmark of an attention variant): the module is built, cast to half and stepped a few times with Adam on float16 inputs."""
import torch
import torch.nn as nn


def bench(batch, nodes, width=256, steps=10, device="cuda"):
    layer = PositionalAttention(width=width, heads=8).to(device).half()  # expect: SF305
    opt = torch.optim.Adam(layer.parameters(), lr=1e-3)
    mse = nn.MSELoss()
    feats = torch.randn(batch, nodes, width, device=device, dtype=torch.float16)
    target = torch.randn(batch, nodes, width, device=device, dtype=torch.float16)
    for _ in range(steps):
        opt.zero_grad()
        loss = mse(layer(feats), target)
        loss.backward()
        opt.step()
