"""Hand-written clipping: the coefficient is clamped at 1 (ok)."""
import torch


def clip_(params, max_norm):
    total = torch.norm(torch.stack([p.grad.norm() for p in params]))
    coef = torch.clamp(max_norm / (total + 1e-12), max=1.0)
    for p in params:
        p.grad.mul_(coef)
