"""Modules are moved once; `nn.Linear(...).to(device)` is not a tensor factory."""
import torch
import torch.nn as nn


def build(device):
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU()).to(device)
    head = nn.Linear(4, 2).cuda()
    return model, head, torch.optim.Adam(model.parameters())
