"""A divisor bound to a name first, epsilon from a module constant (bad)."""
import torch

TINY = 1e-9


def rescale_update(update, param):
    denom = update.norm() + TINY
    return update * (param.norm() / denom)  # expect: SF304
