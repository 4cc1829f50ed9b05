"""Scaler disabled by literal (must be reported)."""
import torch

scaler = torch.amp.GradScaler("cuda", enabled=False)
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.float16):  # expect: SF301
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
