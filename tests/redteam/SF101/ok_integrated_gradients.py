"""Integrated gradients attribution: scaled inputs require grad and .grad is accumulated (legitimate saliency)."""
import torch
import torch.nn.functional as F


def integrated_gradients(model, image, label, baseline=None, steps=32):
    baseline = torch.zeros_like(image) if baseline is None else baseline
    total = torch.zeros_like(image)
    for k in range(1, steps + 1):
        scaled = (baseline + (k / steps) * (image - baseline)).detach()
        scaled.requires_grad_(True)
        loss = F.nll_loss(F.log_softmax(model(scaled), dim=1), label)
        model.zero_grad()
        loss.backward()
        total += scaled.grad
    return (image - baseline) * total / steps
