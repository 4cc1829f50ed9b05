"""Advantages scaled by a running std kept on the instance, which the methods call `this`, with a tiny eps from
an `__init__` default (bad: the receiver is not `self`)."""
import torch


class AdvantageNormalizer:
    def __init__(this, eps=1e-8):
        this.eps = eps
        this.std = torch.ones(())

    def observe(this, advantages):
        this.std = advantages.std()

    def __call__(this, advantages):
        return advantages / (this.std + this.eps)  # expect: SF304
