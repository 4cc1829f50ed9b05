"""A one-off evaluation function nothing trains: built once per call, outside any step or forward."""
import torch


@torch.no_grad()
def evaluate(model, data, device):
    ids = torch.arange(len(data)).to(device)
    return model(ids).mean().item()
