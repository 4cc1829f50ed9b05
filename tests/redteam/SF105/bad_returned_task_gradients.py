"""Per-task gradient sums built by a helper and returned; the caller only compares them (cosine)."""
import torch
from torch import nn


def task_gradients(model, loader):
    sums = [torch.zeros_like(p) for p in model.parameters()]  # expect: SF105
    for x, y in loader:
        model.zero_grad()
        model.loss(x, y).backward()
        for s, p in zip(sums, model.parameters()):
            if p.grad is not None:
                s.add_(p.grad)
    return sums


def gradient_similarity(model, loaders):
    flat = {name: torch.cat([g.flatten() for g in task_gradients(model, dl)]) for name, dl in loaders.items()}
    cos = nn.CosineSimilarity(dim=0)
    return {(a, b): cos(flat[a], flat[b]).item() for a in flat for b in flat}
