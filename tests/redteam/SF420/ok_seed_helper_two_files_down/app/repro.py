"""Reproducibility helper with a neutral name: seeds torch and numpy."""
import numpy as np
import torch


def make_reproducible(value):
    np.random.seed(value)
    torch.manual_seed(value)
