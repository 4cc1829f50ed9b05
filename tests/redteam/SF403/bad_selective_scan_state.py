"""A state-space scan that returns the last hidden state for the next segment, checkpointed per segment."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


def selective_scan(dA, dBx, C, h0):
    h = h0
    ys = []
    for t in range(dA.shape[1]):
        h = dA[:, t] * h + dBx[:, t]
        ys.append((h * C[:, t]).sum(-1))
    return torch.stack(ys, 1), h


class SSMLayer(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.A = nn.Parameter(-torch.rand(d, n))
        self.B = nn.Linear(d, n)
        self.C = nn.Linear(d, n)

    def forward(self, x, h0):
        dA = torch.exp(self.A)[None, None].expand(x.shape[0], x.shape[1], -1, -1)
        dBx = self.B(x)[..., None, :] * x[..., None]
        C = self.C(x)[..., None, :]
        y, h_last = checkpoint(selective_scan, dA, dBx, C, h0, use_reentrant=False)  # expect: SF403
        return y, h_last
