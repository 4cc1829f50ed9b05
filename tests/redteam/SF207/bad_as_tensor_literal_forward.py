"""torch.as_tensor of a literal list with a device, in forward."""
import torch
import torch.nn as nn


class Mixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        weights = torch.as_tensor([0.5, 0.3, 0.2], device=x.device)  # expect: SF207
        return self.lin(x) * weights
