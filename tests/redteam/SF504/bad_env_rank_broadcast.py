"""A broadcast under a rank read from the torchrun environment."""

import os

import torch
import torch.distributed as dist

RANK = int(os.environ["RANK"])


def pick_threshold(scores):
    threshold = torch.zeros(1)
    if RANK == 0:
        threshold = scores.quantile(0.9).reshape(1)
        dist.broadcast(threshold, src=0)  # expect: SF504
    return threshold
