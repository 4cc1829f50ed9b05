"""Validation function collecting predictions in a local list and concatenating them (per-call, freed on return)."""
import torch


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    preds, targets = [], []
    for x, y in loader:
        logits = model(x.to(device))
        preds.append(logits.argmax(-1))
        targets.append(y.to(device))
    model.train()
    preds, targets = torch.cat(preds), torch.cat(targets)
    return (preds == targets).float().mean().item()
