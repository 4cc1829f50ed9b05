"""The loss is multiplied by a precomputed `1 / accum` factor (correct)."""
import torch

scale = 1.0 / accum
opt = torch.optim.AdamW(model.parameters())
for i, (x, y) in enumerate(loader):
    loss = torch.nn.functional.cross_entropy(model(x), y) * scale
    loss.backward()
    if (i + 1) % accum == 0:
        opt.step()
        opt.zero_grad()
