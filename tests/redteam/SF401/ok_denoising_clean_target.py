"""Denoising autoencoder: noise is added out of place to make the input, and the clean image is the target of L1 and MSE (legitimate)."""
import torch
import torch.nn.functional as F


def dae_step(model, optimizer, clean, sigma=0.1):
    noisy = clean + sigma * torch.randn_like(clean)
    target = clean
    out = model(noisy)
    loss = F.l1_loss(out, target) + F.mse_loss(out, clean)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
