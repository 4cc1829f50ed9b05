"""A GAN script: latent noise from torch.randn every step, two optimizers, no seed."""
import torch
from torch import nn as tnn

G = tnn.Sequential(tnn.Linear(100, 784), tnn.Tanh())
D = tnn.Sequential(tnn.Linear(784, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)


def train_step(real):
    z = torch.randn(real.size(0), 100)
    fake = G(z)
    d_loss = D(real).mean() - D(fake.detach()).mean()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = -D(fake).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()


if __name__ == "__main__":  # expect: SF420
    for real in batches:
        train_step(real)
