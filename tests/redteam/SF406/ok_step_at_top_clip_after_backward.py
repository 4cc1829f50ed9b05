"""Deferred step: the step of the previous batch runs first, the clip follows this batch's backward."""
import torch

optimizer = torch.optim.Adam(model.parameters())
pending = False
for x in loader:
    if pending:
        optimizer.step()
        optimizer.zero_grad()
    model(x).mean().backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    pending = True
