"""The missing and unexpected keys are unpacked into names nothing reads."""
import torch
from torch import nn


def warm_start(path):
    net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
    missing_keys, unexpected_keys = net.load_state_dict(torch.load(path, map_location="cpu"), strict=False)  # expect: SF412
    return net
