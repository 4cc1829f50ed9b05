"""Unlearning probe: after the main Adam step, gradient ascent is run by hand on a deep copy with its own backward on the forget set (separate model, fresh gradients)."""
import copy

import torch


def train_and_probe(model, optimizer, retain_batch, forget_batch, loss_fn, ascent_lr=1e-3):
    optimizer.zero_grad()
    loss_fn(model, retain_batch).backward()
    optimizer.step()
    probe = copy.deepcopy(model)
    probe.zero_grad()
    loss_fn(probe, forget_batch).backward()
    with torch.no_grad():
        for p in probe.parameters():
            if p.grad is not None:
                p.add_(p.grad, alpha=ascent_lr)
    return loss_fn(probe, retain_batch).item()
