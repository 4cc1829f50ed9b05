import torch

TINY = 1e-9


def rescale_update(update, param):
    denom = update.norm() + TINY
    return update * (param.norm() / denom)  # expect: SF304
