"""Mined (VAE with a logic regulariser): the combined loss handed to clip_grad_norm_ after backward."""
import torch.nn.functional as F
from torch.nn.utils import clip_grad_norm_


def fit(net, loader, opt, scheduler, weight):
    history = []
    for i, x in enumerate(loader):
        recon, mu, logvar = net(x)
        recon_loss = F.binary_cross_entropy_with_logits(recon, x)
        kld = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum()
        loss = recon_loss + weight * kld
        opt.zero_grad()
        loss.backward()
        clip_grad_norm_(loss, 1)  # expect: SF417
        opt.step()
        scheduler.step()
        history.append(loss.item())
    return history
