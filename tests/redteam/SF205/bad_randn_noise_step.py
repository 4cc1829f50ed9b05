"""A denoising step drawing its noise on the host and moving it to the model's device."""
import torch


def denoise_step(model, x, optimizer, device):
    noise = torch.randn(x.shape).to(device)  # expect: SF205
    loss = (model(x + noise) - x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
