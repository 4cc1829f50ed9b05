"""Mined (potential-based intrinsic motivation): shaped rewards divided by sqrt(normalizer.var + 1e-8), a running variance of earlier batches."""
import torch


class RunningVar:
    def __init__(self):
        self.var = torch.ones(())
        self.count = 1e-4

    def update(self, x):
        batch_var = x.var()
        self.var = (self.var * self.count + batch_var * x.numel()) / (self.count + x.numel())
        self.count += x.numel()


def shaped_rewards(potential, next_potential, gamma, normalizer: RunningVar):
    raw = gamma * next_potential - potential
    normalizer.update(raw)
    normed = raw / torch.sqrt(normalizer.var + 1e-8)  # expect: SF304
    return normed
