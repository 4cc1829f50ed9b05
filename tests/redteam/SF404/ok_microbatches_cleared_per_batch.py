"""Micro-batches accumulate inside one batch; the clear is in the batch loop."""
import torch

optimizer = torch.optim.AdamW(model.parameters())
for batch in loader:
    optimizer.zero_grad(set_to_none=True)
    for micro in batch.split(4):
        (model(micro).mean() / 4).backward()
    optimizer.step()
