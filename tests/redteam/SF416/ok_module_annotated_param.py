"""A parameter annotated as an nn.Module is moved in place."""
import torch
from torch import nn


def place(model: nn.Module, device: torch.device) -> nn.Module:
    model.to(device)
    model.float()
    return model
