"""AMP: the clip after the scaler step and update."""
import torch

scaler = torch.amp.GradScaler("cuda")
optimizer = torch.optim.AdamW(model.parameters())
for x in loader:
    with torch.autocast("cuda"):
        loss = model(x)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: SF406
    optimizer.zero_grad()
