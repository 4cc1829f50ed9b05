"""Scaler passed in (must stay silent)."""
import torch


def train_one_epoch(model, loader, optimizer, scaler):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
