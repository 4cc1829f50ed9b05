"""Near miss: the helper's loss is added as `loss.item()` to the epoch sum (legitimate)."""
import torch
import torch.nn.functional as F


def p_losses(denoiser, x_start, condition, t, alphas_cumprod):
    noise = torch.randn_like(x_start)
    a = alphas_cumprod[t].view(-1, 1, 1, 1)
    predicted = denoiser(a.sqrt() * x_start + (1 - a).sqrt() * noise, condition, t)
    return F.l1_loss(predicted, noise)


def train(denoiser, loader, optimizer, alphas_cumprod, epochs, device):
    for epoch in range(epochs):
        running_loss = 0.0
        for latents, sketches in loader:
            latents, sketches = latents.to(device), sketches.to(device)
            t = torch.randint(0, len(alphas_cumprod), (latents.shape[0],), device=device)
            loss = p_losses(denoiser, latents, sketches, t, alphas_cumprod)
            running_loss = running_loss + loss.item()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print("epoch", epoch, running_loss / len(loader))
