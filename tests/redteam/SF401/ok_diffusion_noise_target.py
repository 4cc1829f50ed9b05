"""Diffusion training: the noise is the target of the epsilon-prediction MSE, the model sees the noised latents (legitimate)."""
import torch
import torch.nn.functional as F


def diffusion_step(unet, scheduler, optimizer, latents, cond):
    noise = torch.randn_like(latents)
    t = torch.randint(0, scheduler.config.num_train_timesteps, (latents.size(0),), device=latents.device)
    noisy_latents = scheduler.add_noise(latents, noise, t)
    target = noise if scheduler.config.prediction_type == "epsilon" else scheduler.get_velocity(latents, noise, t)
    pred = unet(noisy_latents, t, cond).sample
    loss = F.mse_loss(pred.float(), target.float())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
