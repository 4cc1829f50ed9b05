"""Stochastic gradient Langevin dynamics written by hand: half-step along the gradient plus Gaussian noise, no optimizer (legitimate manual update)."""
import math

import torch


def sgld_sample(model, loader, log_prior, lr=1e-4, n_data=50000, steps=1000):
    samples = []
    it = iter(loader)
    for step in range(steps):
        x, y = next(it)
        model.zero_grad()
        nll = torch.nn.functional.cross_entropy(model(x), y) * n_data
        (nll - log_prior(model)).backward()
        with torch.no_grad():
            for p in model.parameters():
                p.add_(p.grad, alpha=-lr / 2)
                p.add_(torch.randn_like(p) * math.sqrt(lr))
        if step % 100 == 0:
            samples.append({k: v.detach().cpu().clone() for k, v in model.state_dict().items()})
    return samples
