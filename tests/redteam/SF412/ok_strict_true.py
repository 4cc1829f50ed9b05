"""strict=True spelled out."""
import torch


def load(net, path):
    net.load_state_dict(torch.load(path, map_location="cpu"), strict=True)
