"""Legacy cuda.amp autocast: standardisation by sqrt(var + 1e-12) with var left in fp16 (bad)."""
import torch
from torch.cuda.amp import autocast


def train_step(model, batch, optimizer, scaler):
    with autocast():
        h = model.encoder(batch["x"])
        var = h.var(-1, keepdim=True)
        h = (h - h.mean(-1, keepdim=True)) / torch.sqrt(var + 1e-12)  # expect: SF304
        loss = model.head(h).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
