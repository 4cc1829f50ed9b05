"""A step helper with an annotated scaler argument clips before stepping through it."""
import torch
from torch.amp import GradScaler


def backward_and_step(loss, model, optimizer, scaler: GradScaler, max_norm: float):
    scaler.scale(loss).backward()
    total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # expect: SF303
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
    return total
