"""ok gan generator no grad fakes."""
import torch
import torch.nn.functional as F


def train_d(gen, disc, loader, opt_d, z_dim):
    gen.train()
    disc.train()
    for real in loader:
        with torch.no_grad():
            fake = gen(torch.randn(real.size(0), z_dim))
        d_loss = F.softplus(-disc(real)).mean() + F.softplus(disc(fake)).mean()
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
