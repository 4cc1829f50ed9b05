"""Mined (optimizer comparison script): a hand-written LARS trust ratio, weight norm over gradient norm plus 1e-8."""
import torch


def lars_update(param, grad, velocity, lr=1e-3, momentum=0.9):
    with torch.no_grad():
        trust = param.norm() / (grad.norm() + 1e-8)  # expect: SF304
        velocity.mul_(momentum).add_(grad, alpha=float(trust))
        param.add_(velocity, alpha=-lr)
