"""GAN generator step: the fake images are re-leafed, so the generator never trains (bad)."""
import torch
import torch.nn.functional as F


def generator_step(G, D, z, opt_g):
    fake = G(z)
    fake = torch.tensor(fake, requires_grad=True)  # expect: SF409
    pred = D(fake)
    loss_g = F.binary_cross_entropy_with_logits(pred, torch.ones_like(pred))
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
