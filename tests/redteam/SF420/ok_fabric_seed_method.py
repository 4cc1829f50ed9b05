"""Fabric seeds through its own method."""
import torch
from lightning.fabric import Fabric

if __name__ == "__main__":
    fabric = Fabric(accelerator="cpu")
    fabric.seed_everything(1)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.Adam(model.parameters())
    model, optimizer = fabric.setup(model, optimizer)
    for x, y in data:
        optimizer.zero_grad()
        fabric.backward((model(x) - y).pow(2).mean())
        optimizer.step()
