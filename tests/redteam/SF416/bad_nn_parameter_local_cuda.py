"""A latent code trained directly: the `nn.Parameter` is moved with a discarded `.cuda()`, so the optimizer keeps the host copy."""
import torch
import torch.nn as nn


def fit_latent(generator, target, steps=100):
    z = nn.Parameter(torch.randn(1, 128))
    z.cuda()  # expect: SF416
    opt = torch.optim.Adam([z], lr=0.01)
    for _ in range(steps):
        loss = (generator(z) - target).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return z
