"""Contractive autoencoder: the input (also the reconstruction target) requires grad for the Jacobian penalty, taken with autograd.grad (legitimate)."""
import torch
import torch.nn.functional as F


def cae_step(encoder, decoder, optimizer, x, lam=1e-4):
    x = x.view(x.size(0), -1)
    x.requires_grad_(True)
    h = encoder(x)
    recon = decoder(h)
    jac = torch.autograd.grad(h, x, grad_outputs=torch.ones_like(h), create_graph=True)[0]
    loss = F.mse_loss(recon, x) + lam * jac.pow(2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
