"""The missing and unexpected keys are unpacked and their counts reported."""
import torch


def load(net, path, device):
    missing, unexpected = net.load_state_dict(torch.load(path, map_location="cpu"), strict=False)
    print(f"missing={len(missing)} unexpected={len(unexpected)}")
    net.eval().to(device)
