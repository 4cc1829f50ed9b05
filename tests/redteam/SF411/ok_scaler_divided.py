"""AMP with the division inside `scaler.scale(...)` (correct)."""
import torch

scaler = torch.amp.GradScaler("cuda")
opt = torch.optim.AdamW(model.parameters())
for it, (x, y) in enumerate(loader):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss / accum).backward()
    if (it + 1) % accum == 0:
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
