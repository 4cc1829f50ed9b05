"""A single nn.Parameter latent code, optimised directly."""
import torch
from torch import nn


def invert(generator, target, steps):
    latent = nn.Parameter(torch.zeros(1, 128))
    optimizer = torch.optim.Adam([latent], lr=0.01)
    for _ in range(steps):
        loss = (generator(latent) - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(latent, 1.0)
        optimizer.step()
    return latent
