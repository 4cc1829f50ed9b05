"""The step and the clip sit in exclusive branches."""
import torch

optimizer = torch.optim.Adam(model.parameters())
for i, x in enumerate(loader):
    model(x).mean().backward()
    if i % 2 == 0:
        optimizer.step()
        optimizer.zero_grad()
    else:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
