"""Reptile: an inner Adam trains a clone, then the meta-parameters move toward the clone's weights (difference of weights, no gradient math)."""
import copy

import torch


def reptile_step(model, task_batches, loss_fn, inner_lr=1e-3, meta_lr=0.1):
    fast = copy.deepcopy(model)
    inner_opt = torch.optim.Adam(fast.parameters(), lr=inner_lr)
    for x, y in task_batches:
        inner_opt.zero_grad()
        loss_fn(fast(x), y).backward()
        inner_opt.step()
    with torch.no_grad():
        for p, fp in zip(model.parameters(), fast.parameters()):
            p.add_(fp - p, alpha=meta_lr)
