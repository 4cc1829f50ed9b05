"""Switched on only at the highest verbosity level of the run."""
import torch


def train(model, loader, optimizer, cfg):
    if cfg.verbosity >= 3:
        torch.autograd.set_detect_anomaly(True)
    for batch in loader:
        model(batch).backward()
        optimizer.step()
        optimizer.zero_grad()
