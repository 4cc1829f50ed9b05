"""GAN inversion: the latent code requires grad and is optimised by Adam to match a target image's features (legitimate; the target stays constant)."""
import torch
import torch.nn.functional as F


def invert(generator, encoder, target_img, steps=500, z_dim=512):
    with torch.no_grad():
        target_feats = encoder(target_img)
    z = torch.zeros(1, z_dim, device=target_img.device, requires_grad=True)
    opt = torch.optim.Adam([z], lr=0.05)
    for _ in range(steps):
        img = generator(z)
        loss = F.mse_loss(img, target_img) + F.mse_loss(encoder(img), target_feats)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return z.detach()
