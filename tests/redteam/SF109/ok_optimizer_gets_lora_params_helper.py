"""The optimizer gets what a helper returns (only the adapter weights), not model.parameters()."""
import torch
from torch import nn


class Adapter(nn.Module):
    def __init__(self, block, d=32):
        super().__init__()
        self.block = block
        self.down = nn.Linear(block.width, d)
        self.up = nn.Linear(d, block.width)

    def forward(self, x):
        h = self.block(x)
        return h + self.up(self.down(h).relu())


def adapter_parameters(model):
    return [p for m in model.modules() if isinstance(m, Adapter) for p in (*m.down.parameters(), *m.up.parameters())]


def build(model):
    model.blocks = nn.ModuleList([Adapter(b) for b in model.blocks])
    return torch.optim.AdamW(adapter_parameters(model), lr=1e-3)
