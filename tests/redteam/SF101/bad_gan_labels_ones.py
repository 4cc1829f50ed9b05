"""DCGAN loop: the real/fake labels are created with torch.ones/zeros(..., requires_grad=True) and only serve as BCE targets (bad)."""
import torch
import torch.nn as nn


def train_gan(G, D, loader, opt_g, opt_d, nz=100, device="cuda"):
    bce = nn.BCELoss()
    for real, _ in loader:
        real = real.to(device)
        b = real.size(0)
        valid = torch.ones(b, 1, device=device, requires_grad=True)  # expect: SF101
        fake_label = torch.zeros(b, 1, device=device, requires_grad=True)  # expect: SF101
        z = torch.randn(b, nz, 1, 1, device=device)
        fake = G(z)
        d_loss = bce(D(real), valid) + bce(D(fake.detach()), fake_label)
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = bce(D(fake), valid)
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
