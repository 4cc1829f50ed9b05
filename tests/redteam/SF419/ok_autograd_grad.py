"""Input gradients via torch.autograd.grad: nothing is added to .grad."""
import torch


def saliency(model, images):
    model.eval()
    images = images.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(model(images).sum(), images)
    model.train()
    return g


def train(model, loader, optimizer):
    for x, y in loader:
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()
