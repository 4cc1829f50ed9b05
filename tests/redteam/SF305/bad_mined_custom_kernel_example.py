"""Mined (usage examples of a custom CUDA linear layer): "training loop" example with the layer cast to half and Adam, float16 data."""
import torch
import torch.nn as nn


def example_training():
    layer = FusedLinear(128, 64).cuda().half()  # expect: SF305
    optimizer = torch.optim.Adam(layer.parameters(), lr=0.001)
    for epoch in range(5):
        x = torch.randn(32, 128, device="cuda", dtype=torch.float16)
        t = torch.randn(32, 64, device="cuda", dtype=torch.float16)
        loss = nn.functional.mse_loss(layer(x), t)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
