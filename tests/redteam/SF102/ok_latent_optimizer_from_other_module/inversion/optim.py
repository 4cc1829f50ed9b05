"""Optimizer factory of the inversion package: the latent and the noise maps are what it trains."""
import torch


def latent_optimizer(latent, noise_maps, lr=0.05):
    return torch.optim.Adam([latent] + noise_maps, lr=lr)
