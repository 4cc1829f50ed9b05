"""No scaler step follows the clip (it only measures leftovers for logging; SF406's business, not SF303's)."""
import torch

scaler = torch.amp.GradScaler("cuda")
for batch in loader:
    scaler.scale(model(batch)).backward()
    scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
    optimizer.zero_grad()
