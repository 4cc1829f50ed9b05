"""Full module path torch.cuda.memory.empty_cache() in a diffusion fine-tuning step method (bad)."""
import torch
import torch.nn.functional as F


class DiffusionFinetuner:
    def __init__(self, unet, scheduler, optimizer):
        self.unet, self.noise_scheduler, self.optimizer = unet, scheduler, optimizer

    def train_step(self, latents, cond):
        noise = torch.randn_like(latents)
        t = torch.randint(0, 1000, (latents.size(0),), device=latents.device)
        noisy = self.noise_scheduler.add_noise(latents, noise, t)
        loss = F.mse_loss(self.unet(noisy, t, cond).sample, noise)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        torch.cuda.memory.empty_cache()  # expect: SF201
        return loss.detach()
