"""Nan retry in except (must stay silent)."""
import torch


def fit(model, loader, optimizer):
    for batch in loader:
        loss = model(batch)
        try:
            loss.backward()
        except RuntimeError:
            torch.autograd.set_detect_anomaly(True)
            model(batch).backward()
            raise
        optimizer.step()
        optimizer.zero_grad()
