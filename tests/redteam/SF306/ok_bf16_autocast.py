"""-1e9 under bfloat16 autocast: bfloat16 holds it."""
import torch

for batch in loader:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        s = batch.q @ batch.k.transpose(-2, -1)
        s = s.masked_fill(batch.pad, -1e9)
        loss = (s.softmax(-1) @ batch.v).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
