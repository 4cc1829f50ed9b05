"""An attention block whose score helper, run by forward, drops attention weights with the functional default."""
import torch
import torch.nn as nn
from torch.nn.functional import dropout, softmax


class SelfAttention(nn.Module):
    def __init__(self, dim, p=0.1):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.p = p

    def weights(self, q, k):
        scores = q @ k.transpose(-2, -1) / q.size(-1) ** 0.5
        return dropout(softmax(scores, dim=-1), self.p)  # expect: SF414

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return self.weights(q, k) @ v
