"""VAE step: the single reconstruction target is the input (BCE) plus a KL term (legitimate autoencoder)."""
import torch
import torch.nn.functional as F


def vae_step(vae, optimizer, x, beta=1.0):
    x = x.view(x.size(0), -1)
    recon, mu, logvar = vae(x)
    recon_loss = F.binary_cross_entropy(recon, x, reduction="sum") / x.size(0)
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.size(0)
    loss = recon_loss + beta * kl
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
