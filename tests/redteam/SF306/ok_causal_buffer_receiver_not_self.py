"""Causal self-attention whose methods call their instance `block`: the triangular buffer still guards every row."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalBlock(nn.Module):
    def __init__(block, n_embd, context):
        super().__init__()
        block.qkv = nn.Linear(n_embd, 3 * n_embd)
        block.register_buffer("causal", torch.tril(torch.ones(context, context)).view(1, 1, context, context))

    def forward(block, x):
        q, k, v = block.qkv(x).chunk(3, dim=-1)
        steps = x.size(1)
        scores = (q @ k.transpose(-2, -1)) / k.size(-1) ** 0.5
        scores = scores.masked_fill(block.causal[:, :, :steps, :steps] == 0, float("-inf"))
        return F.softmax(scores, dim=-1) @ v
