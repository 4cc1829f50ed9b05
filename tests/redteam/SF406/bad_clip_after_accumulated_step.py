"""Accumulation: the step behind the gate, the clip after it at the loop level."""
import torch

optimizer = torch.optim.AdamW(model.parameters())
for i, batch in enumerate(loader):
    (model(batch).mean() / 4).backward()
    if (i + 1) % 4 == 0:
        optimizer.step()
        optimizer.zero_grad()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: SF406
