"""A name that may hold a module or a tensor (two bindings disagree): unknown, silent."""
import torch
import torch.nn as nn


def pick(use_layer, device):
    if use_layer:
        thing = nn.Linear(2, 2)
    else:
        thing = torch.zeros(2)
    thing.to(device)
    return thing
