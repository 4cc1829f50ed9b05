"""Attention module memoising causal masks per (sequence length, device): a small constant table, not per-sample data."""
import torch
import torch.nn as nn


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.heads = heads
        self._masks = {}

    def _mask(self, T, device):
        key = (T, device)
        if key not in self._masks:
            self._masks[key] = torch.triu(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=1)
        return self._masks[key]

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)) / (k.size(-1) ** 0.5)
        att = att.masked_fill(self._mask(T, x.device), float("-inf")).softmax(-1)
        return (att @ v).transpose(1, 2).reshape(B, T, C)
