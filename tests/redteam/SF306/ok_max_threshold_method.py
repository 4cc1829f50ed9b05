"""Entries far below the row maximum are dropped with -inf (`x < x.max(-1, keepdim=True).values - margin` is not a threshold from its own top values alone, but `x < top` with `top` from `x.amax` is)."""
import torch


def sparse_softmax(x):
    top = x.amax(dim=-1, keepdim=True)
    return x.masked_fill(x < top, float("-inf")).softmax(-1)
