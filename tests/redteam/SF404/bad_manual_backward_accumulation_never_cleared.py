"""Accumulation gate around the step, but no clear anywhere in the loop."""
import torch

optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accumulation_steps
    loss.backward()
    if (i + 1) % accumulation_steps == 0:
        optimizer.step()  # expect: SF404
        scheduler.step()
