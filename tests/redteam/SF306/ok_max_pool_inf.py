"""-inf fill before a max over valid positions (no softmax)."""
import torch


def masked_max(h, valid):
    return h.masked_fill(~valid.unsqueeze(-1), float("-inf")).amax(dim=1)
