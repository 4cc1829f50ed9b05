"""GAN inversion: the mapped latent is copied and optimised by its own Adam (correct)."""
import torch


def invert(G, target, steps=200):
    w = G.mapping(torch.randn(1, 512)).detach().requires_grad_(True)
    opt = torch.optim.Adam([w], lr=0.01)
    for _ in range(steps):
        loss = torch.nn.functional.mse_loss(G.synthesis(w), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return w.detach()
