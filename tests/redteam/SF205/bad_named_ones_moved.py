"""A forward building an attention bias in a name, then moving the name with `.to(q.device)`."""
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        n = x.size(1)
        bias = torch.ones(n, n).tril()
        bias = bias.to(q.device)  # expect: SF205
        scores = q @ k.transpose(-1, -2) + bias.log()
        return scores.softmax(-1) @ v
