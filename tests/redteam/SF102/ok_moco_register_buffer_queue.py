"""MoCo-style fixed-size queue: a register_buffer overwritten in place at a moving pointer (bounded, not a growing cache)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MoCoHead(nn.Module):
    def __init__(self, dim=128, K=65536):
        super().__init__()
        self.K = K
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def enqueue(self, keys):
        b = keys.shape[0]
        ptr = int(self.queue_ptr)
        self.queue[:, ptr:ptr + b] = keys.detach().T
        self.queue_ptr[0] = (ptr + b) % self.K

    def logits(self, q, k, tau=0.07):
        pos = (q * k).sum(1, keepdim=True)
        neg = q @ self.queue.clone().detach()
        return torch.cat([pos, neg], dim=1) / tau
