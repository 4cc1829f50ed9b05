"""Module-level AMP loop: `scaler.scale(loss).backward()` every batch, `scaler.step` every 16 (bad)."""
import torch
from torch import nn

model = nn.Linear(128, 10)
opt = torch.optim.AdamW(model.parameters())
scaler = torch.amp.GradScaler("cuda")
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
for i, (x, y) in enumerate(loader):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()  # expect: SF411
    if i % 16 == 15:
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
