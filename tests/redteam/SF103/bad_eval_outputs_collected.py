"""Validation that collects raw predictions without no_grad: every batch's graph stays alive."""
import torch


def collect_predictions(model, val_loader):
    model.eval()
    preds = []
    for x, _ in val_loader:
        preds.append(model(x))  # expect: SF103
    return torch.cat(preds)
