"""A diffusion sampler's scheduler (no optimizer) stepped inside an accumulation loop."""
import torch
from diffusers import DDIMScheduler


def train(unet, loader, accum=4):
    sampler = DDIMScheduler(num_train_timesteps=1000)
    opt = torch.optim.AdamW(unet.parameters(), lr=1e-4)
    for i, (x0, t) in enumerate(loader):
        noise = torch.randn_like(x0)
        xt = sampler.add_noise(x0, noise, t)
        eps = unet(xt, t)
        (torch.nn.functional.mse_loss(eps, noise) / accum).backward()
        sampler.step(eps, t, xt)
        if (i + 1) % accum == 0:
            opt.step()
            opt.zero_grad()
