"""A model class wraps its own attention projections with LoRA in __init__; AdamW gets all of it."""
import torch
from torch import nn


class LoRAProj(nn.Module):
    def __init__(self, proj, rank):
        super().__init__()
        self.proj = proj
        self.down = nn.Parameter(torch.zeros(rank, proj.in_features))
        self.up = nn.Parameter(torch.zeros(proj.out_features, rank))

    def forward(self, x):
        return self.proj(x) + (x @ self.down.T) @ self.up.T


class TinyGPTLoRA(nn.Module):
    def __init__(self, base, rank=8):
        super().__init__()
        self.base = base
        for block in self.base.blocks:
            block.attn.qkv = LoRAProj(block.attn.qkv, rank)

    def forward(self, idx):
        return self.base(idx)


def main(base):
    model = TinyGPTLoRA(base)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)  # expect: SF109
    return model, optimizer
