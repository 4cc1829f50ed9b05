"""Gan discriminator step (must be reported)."""
import torch


def train_gan(gen, disc, g_opt, d_opt, loader):
    for real in loader:
        with torch.autograd.detect_anomaly():  # expect: SF203
            fake = gen(torch.randn(real.size(0), 128, device=real.device))
            d_loss = disc(fake.detach()).mean() - disc(real).mean()
            d_opt.zero_grad()
            d_loss.backward()
            d_opt.step()
        g_loss = -disc(fake).mean()
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()
