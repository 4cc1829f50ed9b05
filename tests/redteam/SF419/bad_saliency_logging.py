"""Saliency maps logged every N steps from an eval block; the parameter gradients are never cleared."""
import torch


def saliency(model, images):
    model.eval()
    images = images.detach().clone().requires_grad_(True)
    top = model(images).max(dim=1).values.sum()
    top.backward()  # expect: SF419
    model.train()
    return images.grad.abs().amax(1)


def train(model, loader, optimizer, logger):
    for step, (images, labels) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 1000 == 0:
            logger.image("saliency", saliency(model, images[:4]))
