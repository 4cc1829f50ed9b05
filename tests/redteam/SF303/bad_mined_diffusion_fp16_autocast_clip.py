"""Mined (view-synthesis diffusion trainer): float16 autocast via `from torch.cuda.amp import autocast`, clip at 1.0, then scaler.step."""
import torch
from torch.cuda.amp import GradScaler, autocast


def train_epoch(model, loader, optimizer, criterion, precond):
    scaler = GradScaler()
    total = 0.0
    for context, target, sigma in loader:
        c_skip, c_out, c_in = precond(sigma)
        noisy = target + sigma * torch.randn_like(target)
        with autocast(dtype=torch.float16):
            pred = model(context, noisy * c_in, sigma)
            loss = criterion(pred, (target - c_skip * noisy) / c_out)
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: SF303
        scaler.step(optimizer)
        scaler.update()
        total += loss.item()
    return total / len(loader)
