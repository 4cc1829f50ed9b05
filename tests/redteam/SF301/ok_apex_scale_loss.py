"""Apex scale loss (must stay silent)."""
import torch
from apex import amp

model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for batch in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(batch).mean()
    with amp.scale_loss(loss, optimizer) as scaled:
        scaled.backward()
    optimizer.step()
