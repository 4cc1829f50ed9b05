"""New api from import (must stay silent)."""
from torch.amp import GradScaler, autocast


def train_step(model, batch, optimizer, scaler: GradScaler):
    with autocast("cuda", dtype=batch.dtype):
        loss = model(batch)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
