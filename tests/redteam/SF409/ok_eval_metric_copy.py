"""Validation: a copy re-wrapped for a metric helper, no backward anywhere (not training)."""
import torch


def validate(model, loader, metric):
    for x, y in loader:
        pred = torch.tensor(model(x).detach(), requires_grad=False)
        metric.update(pred, y)
    return metric.compute()
