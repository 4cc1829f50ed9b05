"""Fabric's wrapped module returns the original module's state dict."""
import torch
from lightning.fabric import Fabric


def train(model, optimizer, path):
    fabric = Fabric(devices=2)
    model, optimizer = fabric.setup(model, optimizer)
    torch.save(model.state_dict(), path)
