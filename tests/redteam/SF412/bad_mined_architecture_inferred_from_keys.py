"""Mined (chord recogniser loader): the architecture is guessed from the checkpoint, then loaded loosely and cached."""
import torch
import torch.nn as nn


class ChordNet(nn.Module):
    def __init__(self, width=64, depth=2):
        super().__init__()
        self.body = nn.Sequential(*[nn.Linear(width, width) for _ in range(depth)])


def load_cached(path, cache):
    blob = torch.load(path, map_location="cpu")
    weights = blob["state_dict"]
    width = weights["body.0.weight"].shape[0]
    net = ChordNet(width=width)
    net.load_state_dict(weights, strict=False)  # expect: SF412
    net.eval()
    cache[path] = net
    return net
