"""Seeding helper: seeds Python, numpy and torch (through a nested helper)."""
import random

import numpy as np
import torch


def _torch_seed(seed):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed)
    _torch_seed(seed)
