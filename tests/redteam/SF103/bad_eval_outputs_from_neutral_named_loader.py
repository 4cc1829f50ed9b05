"""Validation collecting raw predictions without no_grad from `stream`, bound to a `DataLoader`: every batch's
graph stays alive whatever the loader is called (bad; the old test knew a data source only by a loader-like name)."""
import torch
from torch.utils.data import DataLoader


def collect_predictions(model, held_out):
    model.eval()
    stream = DataLoader(held_out, batch_size=64)
    preds = []
    for x, _ in stream:
        preds.append(model(x))  # expect: SF103
    return torch.cat(preds)
