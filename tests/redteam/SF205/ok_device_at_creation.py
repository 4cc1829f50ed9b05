"""Factories that already name the device, or pin memory for an asynchronous copy."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        pos = torch.arange(x.size(1), device=x.device)
        staged = torch.zeros(x.shape, pin_memory=True).to(x.device, non_blocking=True)
        return self.fc(x) + pos[:, None] + staged
