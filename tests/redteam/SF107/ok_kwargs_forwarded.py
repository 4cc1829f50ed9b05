"""A wrapper that forwards the caller's keyword arguments (map_location among them)."""
import torch


def load_into(model, path, **kwargs):
    model.load_state_dict(torch.load(path, **kwargs))
