"""Getattr dtype string (must be reported)."""
import torch

DTYPE = getattr(torch, "float16")

for step, batch in enumerate(loader):
    with torch.autocast("cuda", dtype=DTYPE):  # expect: SF301
        loss = model(batch)
    loss.backward()
    opt.step()
    opt.zero_grad()
