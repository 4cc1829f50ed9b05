"""Mined shape: a load-checkpoint helper takes (path, model, optimizer), restores both from torch.load without map_location and returns them with the epoch (bad)."""
import torch


def restore_checkpoint(path, model, optimizer):
    blob = torch.load(path)  # expect: SF107
    model.load_state_dict(blob["state_dict"])
    optimizer.load_state_dict(blob["optimizer"])
    return model, optimizer, blob["epoch"]
