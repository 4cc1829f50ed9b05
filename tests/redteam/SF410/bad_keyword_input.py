"""Loss called with keywords, the softmax output passed as `input=` (bad)."""
import torch
import torch.nn.functional as F


def step(model, x, y):
    p = torch.softmax(model(x), dim=1)
    return F.cross_entropy(input=p, target=y)  # expect: SF410
