"""The loss comes from a project helper that takes the accumulation count (not shown to be unscaled)."""
import torch
from project.losses import scaled_loss

opt = torch.optim.AdamW(model.parameters())
for i, batch in enumerate(loader):
    loss = scaled_loss(model, batch, accum_steps=accum)
    loss.backward()
    if (i + 1) % accum == 0:
        opt.step()
        opt.zero_grad()
