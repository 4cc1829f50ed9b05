"""A parameter moved in forward (it lives on the module's device already)."""
import torch
import torch.nn as nn


class Temperature(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = nn.Parameter(torch.ones(1))

    def forward(self, logits):
        return logits / self.t.to(logits.device)
