"""Validation function flushing the cache per batch of a long-sequence eval loop: evaluation code, not the training path."""
import torch


@torch.no_grad()
def validate(model, val_loader, device):
    model.eval()
    total, n = 0.0, 0
    for batch in val_loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        total += model(**batch).loss.item()
        n += 1
        torch.cuda.empty_cache()
    model.train()
    return total / max(n, 1)
