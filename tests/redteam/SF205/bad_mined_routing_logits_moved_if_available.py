"""Mined shape: a capsule layer's forward builds its routing logits with torch.zeros and moves them under `if torch.cuda.is_available():` on every call, then updates them in the routing loop (bad)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DenseCapsule(nn.Module):
    def __init__(self, in_caps, out_caps, routings, gpu):
        super().__init__()
        self.in_caps, self.out_caps, self.routings, self.gpu = in_caps, out_caps, routings, gpu
        self.weight = nn.Parameter(0.01 * torch.randn(out_caps, in_caps, 16, 8))

    def forward(self, x):
        x_hat = torch.squeeze(torch.matmul(self.weight, x[:, None, :, :, None]), dim=-1)
        detached = x_hat.detach()
        b = torch.zeros(x.size(0), self.out_caps, self.in_caps)
        if torch.cuda.is_available():
            b = b.cuda(self.gpu)  # expect: SF205
        for i in range(self.routings):
            c = F.softmax(b, dim=1)
            outputs = torch.sum(c[:, :, :, None] * detached, dim=-2, keepdim=True)
            b = b + torch.sum(outputs * detached, dim=-1)
        return torch.squeeze(outputs, dim=-2)
