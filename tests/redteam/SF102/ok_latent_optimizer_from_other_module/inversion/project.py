"""GAN inversion: a latent trained by an optimizer another module builds; its trajectory is kept for a preview."""
import torch
import torch.nn.functional as F

from .optim import latent_optimizer


def project(generator, target, mean_latent, steps=500, record_every=25):
    latent = mean_latent.detach().clone()
    latent.requires_grad = True
    noise_maps = [torch.randn(1, 1, 4 * 2 ** i, 4 * 2 ** i, device=target.device, requires_grad=True)
                  for i in range(6)]
    optimizer = latent_optimizer(latent, noise_maps)
    trajectory = []
    for step in range(steps):
        loss = F.l1_loss(generator(latent, noise_maps), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % record_every == 0:
            trajectory.append(latent.detach().clone())
    with torch.no_grad():
        preview = generator(torch.cat(trajectory[-8:]), noise_maps)
    return preview
