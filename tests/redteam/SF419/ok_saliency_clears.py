"""Saliency computed in eval mode, then the model's gradients cleared."""
import torch


def saliency(model, images):
    model.eval()
    images = images.clone().requires_grad_(True)
    model(images).max(1).values.sum().backward()
    maps = images.grad.abs()
    model.zero_grad(set_to_none=True)
    model.train()
    return maps


def train(model, loader, optimizer):
    for x, y in loader:
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()
        log(saliency(model, x[:4]))
