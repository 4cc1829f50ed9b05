"""The classic spelling: a lambda map_location keeps storages on the CPU."""
import torch


def restore(model, path):
    state = torch.load(path, map_location=lambda storage, loc: storage)
    model.load_state_dict(state["model"])
