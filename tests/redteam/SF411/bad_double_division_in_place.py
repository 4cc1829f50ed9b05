"""Divided twice: `loss /= accum` and then `(loss / accum).backward()` (bad)."""
import torch


def fit(model, loader, accum):
    opt = torch.optim.AdamW(model.parameters())
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss /= accum
        (loss / accum).backward()  # expect: SF411
        if (i + 1) % accum == 0:
            opt.step()
            opt.zero_grad()
