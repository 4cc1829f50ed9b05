"""Self attribute dtype (must be reported)."""
import torch


class DiffusionTrainer:
    def __init__(self, unet, optimizer):
        self.unet = unet
        self.optimizer = optimizer
        self.weight_dtype = torch.float16

    def training_step(self, latents, noise, timesteps):
        with torch.autocast("cuda", dtype=self.weight_dtype):  # expect: SF301
            pred = self.unet(latents + noise, timesteps)
            loss = torch.nn.functional.mse_loss(pred.float(), noise.float())
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss
