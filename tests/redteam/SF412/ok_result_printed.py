"""The load result is printed for the user to see."""
import torch


def load(net, path):
    msg = net.load_state_dict(torch.load(path, map_location="cpu"), strict=False)
    print(msg)
    return net
