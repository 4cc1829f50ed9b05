"""AMP: a new optimizer every pass, stepped through the scaler."""
import torch

scaler = torch.amp.GradScaler("cuda")
for batch in loader:
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)  # expect: SF408
    with torch.autocast("cuda"):
        loss = model(batch)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
