"""Mined (web demo loader): the DataParallel prefix stripped by hand, then a loose load, then frozen."""
import torch


def load_for_demo(net, path, device):
    checkpoint = torch.load(path, map_location=device)
    weights = checkpoint["state_dict"]
    if next(iter(weights)).startswith("module."):
        weights = {k[7:]: v for k, v in weights.items()}
    net.load_state_dict(weights, strict=False)  # expect: SF412
    net.eval()
    for p in net.parameters():
        p.requires_grad = False
    return net
