"""Mined (time-series trainer): a generator that yields each step's loss; clip from a config field before scaler.step."""
import torch
from torch.amp import GradScaler, autocast


def training_steps(model, loader, optimizer, criterion, scheduler, cfg, device):
    scaler = GradScaler(device)
    for x, y, mark in loader:
        x, y, mark = x.to(device), y.to(device), mark.to(device)
        with autocast(device):
            out, _ = model(x, mark)
            loss = criterion(out, y)
        if not torch.isfinite(loss):
            raise RuntimeError("non-finite loss")
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.gradient_clip)  # expect: SF303
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        optimizer.zero_grad()
        yield loss.item()
