"""Fabric backward (must stay silent)."""
import torch
from lightning.fabric import Fabric

fabric = Fabric(precision="16-mixed")
model, optimizer = fabric.setup(model, optimizer)
for batch in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(batch).mean()
    fabric.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
