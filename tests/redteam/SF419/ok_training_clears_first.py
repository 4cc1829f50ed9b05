"""Adversarial training: the attack runs in eval mode, and the training pass clears before its backward."""
import torch


def pgd(model, x, y, eps, steps=3):
    model.eval()
    delta = torch.zeros_like(x, requires_grad=True)
    for _ in range(steps):
        torch.nn.functional.cross_entropy(model(x + delta), y).backward()
        delta.data = (delta + eps / steps * delta.grad.sign()).clamp(-eps, eps)
        delta.grad.zero_()
    model.train()
    return (x + delta).detach()


def train(model, loader, optimizer):
    for x, y in loader:
        x_adv = pgd(model, x, y, 8 / 255)
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x_adv), y)
        loss.backward()
        optimizer.step()
