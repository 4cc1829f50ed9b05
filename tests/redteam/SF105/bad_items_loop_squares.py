"""Sums kept by parameter name and updated through `.items()` on every batch of a loader."""
import torch


def importance(model, loader, criterion):
    sq = {n: torch.zeros_like(p) for n, p in model.named_parameters()}  # expect: SF105
    named = dict(model.named_parameters())
    for inputs, targets in loader:
        model.zero_grad()
        criterion(model(inputs), targets).backward()
        for n, g in sq.items():
            g.add_(named[n].grad.pow(2))
    top = sorted(((float(g.sum()), n) for n, g in sq.items()), reverse=True)
    return [n for _, n in top[:10]]
