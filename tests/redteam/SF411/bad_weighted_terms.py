"""VAE-style loss: reconstruction + beta * KL mean, accumulated over 8 steps without division (bad)."""
import torch
import torch.nn.functional as F


def vae_epoch(vae, loader, optimizer, beta=0.5):
    for i, x in enumerate(loader):
        recon, mu, logvar = vae(x)
        kld = (-0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(1)).mean()
        loss = F.mse_loss(recon, x) + beta * kld
        loss.backward()  # expect: SF411
        if (i + 1) % 8 == 0:
            optimizer.step()
            optimizer.zero_grad()
