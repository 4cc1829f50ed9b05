"""A mixup module shuffling the batch with a permutation drawn on the host and moved in forward."""
import torch
import torch.nn as nn


class Mixup(nn.Module):
    def __init__(self, alpha=0.2):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        perm = torch.randperm(x.size(0)).to(x.device)  # expect: SF205
        lam = 0.7
        return lam * x + (1 - lam) * x[perm]
