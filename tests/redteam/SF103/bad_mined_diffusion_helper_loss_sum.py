"""Mined shape: a diffusion training loop gets the denoising loss from a module-level helper (`p_losses(...)`) and
adds it to `running_loss` before backward, every step of the epoch (bad)."""
import torch
import torch.nn.functional as F


def p_losses(denoiser, x_start, condition, t, alphas_cumprod):
    noise = torch.randn_like(x_start)
    a = alphas_cumprod[t].view(-1, 1, 1, 1)
    noisy = a.sqrt() * x_start + (1 - a).sqrt() * noise
    predicted = denoiser(noisy, condition, t)
    return F.l1_loss(predicted, noise)


def train(denoiser, loader, optimizer, scheduler, alphas_cumprod, epochs, device):
    for epoch in range(epochs):
        running_loss = 0.0
        for idx, (latents, sketches) in enumerate(loader):
            latents, sketches = latents.to(device), sketches.to(device)
            t = torch.randint(0, len(alphas_cumprod), (latents.shape[0],), device=device).long()
            loss = p_losses(denoiser, latents, sketches, t, alphas_cumprod)
            if idx % 50 == 0:
                print(epoch, idx, loss.item())
            running_loss = running_loss + loss  # expect: SF103
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
        print("epoch", epoch, float(running_loss) / len(loader))
