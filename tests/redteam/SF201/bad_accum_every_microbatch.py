"""Gradient accumulation: the optimizer step is gated on the boundary but empty_cache() runs on every micro-batch (bad)."""
import torch


def train_epoch(model, loader, optimizer, scaler, accum=8):
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda()) / accum
        scaler.scale(loss).backward()
        if (i + 1) % accum == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
        torch.cuda.empty_cache()  # expect: SF201
