"""Mined (multi-task attribute model): a learnable loss module's parameters clipped next to the model's."""
import torch
from torch import nn


def setup(model, loss, clip_value=10):
    nn.utils.clip_grad_value_(model.parameters(), clip_value)
    nn.utils.clip_grad_value_(loss.parameters(), clip_value)
    params = list(loss.parameters()) + list(model.parameters())
    return torch.optim.SGD(params, lr=0.01, momentum=0.9)
