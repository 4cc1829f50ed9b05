"""Helpers: `set_seed` turns on deterministic cuDNN kernels but seeds no generator."""
import torch


def set_seed(seed):
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    return seed
