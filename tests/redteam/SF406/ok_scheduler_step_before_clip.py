"""Only the learning-rate scheduler steps before the clip; the optimizer steps after it."""
import torch

optimizer = torch.optim.AdamW(model.parameters())
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, 100)
for batch in loader:
    model(batch).mean().backward()
    scheduler.step()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad()
