"""`np.load` and a project's `load_checkpoint` are not torch.load."""
import numpy as np
import torch

from utils.io import load_checkpoint as load


def setup(model, stats_path, ckpt):
    mean = torch.from_numpy(np.load(stats_path)).cuda()
    model.load_state_dict(load(ckpt))
    return mean
