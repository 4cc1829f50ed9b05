"""A tensor's gather and functools.reduce under a rank test are no collectives."""

import functools
import operator

import torch


def pick(logits, labels, rank, sizes):
    if rank == 0:
        scores = logits.gather(-1, labels.unsqueeze(-1))
        total = functools.reduce(operator.mul, sizes, 1)
        print(scores.sum() / total)
