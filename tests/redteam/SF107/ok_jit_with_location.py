"""A TorchScript module loaded onto the CPU and then moved."""
import torch


def load_scripted(path, device):
    module = torch.jit.load(path, map_location="cpu")
    return module.to(device).eval()
