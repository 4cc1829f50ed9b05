"""Diffusion fine-tuning loop: the optional clip sits in an `if`, still on scaled gradients."""
import torch
from torch.cuda.amp import GradScaler as Scaler


def main(args, unet, vae, text_encoder, loader, optimizer, noise_scheduler):
    scaler = Scaler(enabled=args.fp16)
    for step, batch in enumerate(loader):
        with torch.autocast("cuda", enabled=args.fp16):
            latents = vae.encode(batch["pixel_values"]).latent_dist.sample() * 0.18215
            noise = torch.randn_like(latents)
            t = torch.randint(0, 1000, (latents.shape[0],), device=latents.device)
            pred = unet(noise_scheduler.add_noise(latents, noise, t), t, text_encoder(batch["input_ids"])[0]).sample
            loss = torch.nn.functional.mse_loss(pred.float(), noise.float())
        scaler.scale(loss).backward()
        if args.clip_grad_norm is not None:
            torch.nn.utils.clip_grad_norm(unet.parameters(), args.clip_grad_norm)  # expect: SF303
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
