"""Stochastic weight averaging by hand after each optimizer step: the running average moves toward the weights (no gradient involved)."""
import copy

import torch


def train_swa(model, optimizer, loader, loss_fn, swa_start):
    swa_model = copy.deepcopy(model)
    n = 0
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
        if step >= swa_start:
            n += 1
            with torch.no_grad():
                for swa_p, p in zip(swa_model.parameters(), model.parameters()):
                    swa_p.mul_((n - 1) / n).add_(p.detach(), alpha=1.0 / n)
    return swa_model
