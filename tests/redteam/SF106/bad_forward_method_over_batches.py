"""Validation calls model.forward explicitly for each batch."""
import torch.nn.functional as F


def validate(model, val_batches):
    model.eval()
    losses = [F.mse_loss(model.forward(x), y).item() for x, y in val_batches]  # expect: SF106
    return sum(losses) / len(losses)
