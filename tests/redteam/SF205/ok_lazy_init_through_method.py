"""A table built on the host then moved, but only while the cache is still empty: once per object, not per call.

The guard tests that the dict is empty and the method it calls fills the dict, so later calls skip it (the shape of
avalanche's nearest-class-mean heads, paraphrased)."""
import torch
from torch import nn


class NearestMean(nn.Module):
    def __init__(self, max_class):
        super().__init__()
        self.max_class = max_class
        self.means = {}
        self.stacked = None

    def _stack(self):
        dim = next(iter(self.means.values())).size(0)
        device = next(iter(self.means.values())).device
        self.stacked = torch.zeros(self.max_class + 1, dim).to(device)
        for k, v in self.means.items():
            self.stacked[k] = v

    def _add_missing(self, classes, dim, device):
        for k in classes:
            if k not in self.means:
                self.means[k] = torch.zeros(dim).to(device)
        self._stack()

    def forward(self, x):
        if self.means == {}:
            self._add_missing(range(self.max_class + 1), x.shape[1], x.device)
        return -torch.cdist(self.stacked, x).T


class CachedMask(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self.mask = None
        self.proj = nn.Linear(n, n)

    def forward(self, x):
        if self.mask is None:
            self.mask = torch.ones(self.n, self.n).tril().to(x.device)
        return self.proj(x) @ self.mask
