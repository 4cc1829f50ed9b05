"""Robust accuracy with FGSM in eval mode between epochs; the training pass clears at its end."""
import torch
import torch.nn.functional as F


def robust_acc(net, loader, eps=8 / 255):
    net.eval()
    hits = 0
    for x, y in loader:
        x = x.clone().requires_grad_(True)
        F.cross_entropy(net(x), y).backward()  # expect: SF419
        adv = (x + eps * x.grad.sign()).clamp(0, 1).detach()
        hits += (net(adv).argmax(1) == y).sum().item()
    net.train()
    return hits


def train(net, loader, test_loader, opt, epochs):
    for _ in range(epochs):
        for x, y in loader:
            F.cross_entropy(net(x), y).backward()
            opt.step()
            opt.zero_grad()
        print(robust_acc(net, test_loader))
