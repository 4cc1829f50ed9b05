"""A sliced-Wasserstein loss drawing projections and indices from a seeded CPU generator, then moving them (fixtures/style_transfer)."""
import torch
import torch.nn as nn


class PatchSWD(nn.Module):
    def __init__(self, projections=16, seed=0):
        super().__init__()
        self.projections = projections
        self.generator = torch.Generator().manual_seed(seed)

    def forward(self, pred, style):
        n = min(pred.size(0), style.size(0))
        idx = torch.randperm(pred.size(0), generator=self.generator)[:n].to(pred.device)
        theta = torch.randn(pred.size(1), self.projections, generator=self.generator).to(pred.device)
        p, _ = torch.sort(pred[idx] @ theta, dim=0)
        s, _ = torch.sort(style[:n] @ theta, dim=0)
        return (p - s).pow(2).mean()
