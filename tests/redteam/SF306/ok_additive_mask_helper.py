"""A helper builds an additive -inf mask from a triangular mask; it is added to scores elsewhere."""
import torch


def subsequent_mask(size):
    mask = (torch.triu(torch.ones(size, size)) == 1).transpose(0, 1).float()
    return mask.masked_fill(mask == 0, float("-inf")).masked_fill(mask == 1, 0.0)
