"""Mined shape: a utility module's restore(model, filename) is one line, `model.load_state_dict(torch.load(filename))` (bad)."""
import torch


def snapshot(model, filename):
    torch.save(model.state_dict(), filename)


def restore(model, filename):
    model.load_state_dict(torch.load(filename))  # expect: SF107
