"""GAN iteration with an identical cleanup block after the D step and after the G step (two flushes per step, bad)."""
import torch
import torch.nn.functional as F


def train(G, D, loader, opt_g, opt_d, z_dim=128):
    for real in loader:
        real = real.cuda()
        z = torch.randn(real.size(0), z_dim, device="cuda")
        fake = G(z)
        d_loss = F.softplus(D(fake.detach())).mean() + F.softplus(-D(real)).mean()
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()  # expect: SF201
        g_loss = F.softplus(-D(fake)).mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()  # expect: SF201
