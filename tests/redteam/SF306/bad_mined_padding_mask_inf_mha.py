"""Mined (a from-scratch multi-head attention): key padding filled with -inf before softmax; an all-padding sequence yields NaN."""
import torch
import torch.nn.functional as F


class MultiHead(torch.nn.Module):
    def forward(self, x, padding_mask=None):
        b, n, _ = x.shape
        q, k, v = self.split(self.qkv(x))
        scores = torch.matmul(q, k.transpose(-2, -1)) / (self.head_dim ** 0.5)
        if padding_mask is not None:
            mask = padding_mask.view(b, 1, 1, n)
            scores = scores.masked_fill(~mask, float('-inf'))  # expect: SF306
        weights = F.softmax(scores, dim=-1)
        return self.merge(torch.matmul(self.drop(weights), v))
