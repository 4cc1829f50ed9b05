"""Convolutional autoencoder with L1 and SSIM losses toward the same input under two names (`target = images`), the single real target (legitimate)."""
import torch.nn.functional as F


def ae_step(model, ssim_loss, optimizer, images):
    target = images
    recon = model(images)
    loss = F.l1_loss(recon, target) + 0.5 * ssim_loss(recon, images)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
