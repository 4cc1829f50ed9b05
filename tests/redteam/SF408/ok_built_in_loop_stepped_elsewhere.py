"""Optimizers built in a loop over parameter groups; stepped later in the training loop."""
import torch

opts = {}
for name, module in model.named_children():
    opts[name] = torch.optim.Adam(module.parameters())
for batch in loader:
    model(batch).mean().backward()
    for opt in opts.values():
        opt.step()
        opt.zero_grad()
