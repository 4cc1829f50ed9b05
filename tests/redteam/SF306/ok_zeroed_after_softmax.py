"""Zero entries get -inf, and the softmax output is masked back to 0 with the same mask (as in an adapter-mixing layer of the real corpus): a fully masked row ends as zeros, not NaN."""
import torch


def normalise(scalings):
    nonzero = scalings != 0
    full = scalings.masked_fill(~nonzero, float("-inf"))
    weights = torch.softmax(full, dim=-1)
    return weights.masked_fill(~nonzero, 0.0)
