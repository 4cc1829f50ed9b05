"""A model handed in as a parameter: nothing the file shows wraps it."""
import torch


def save(model, path):
    torch.save(model.state_dict(), path)
