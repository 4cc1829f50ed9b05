"""Lightning module writing artifacts only where trainer.is_global_zero holds (a Fabric for evidence)."""
import torch
from lightning.fabric import Fabric


def main(model, path):
    fabric = Fabric(devices=2, strategy="ddp")
    fabric.launch()
    model = fabric.setup(model)
    if fabric.is_global_zero:
        torch.save(model.state_dict(), path)
