"""Mined shape: labels get `.requires_grad = True`, then a per-class loop hands them to a same-file focal helper that passes them on to binary_cross_entropy as the target (bad)."""
import torch
import torch.nn.functional as F


def focal_term(prob, labels, cls, gamma=2.0):
    target = labels[:, cls]
    weight = (1 - prob).pow(gamma)
    return (weight * F.binary_cross_entropy(prob, target, reduction="none")).mean()


def train_batches(model, batches, optimizer, n_classes, device):
    for images, labels in batches:
        images = torch.Tensor(images).to(device)
        labels = torch.Tensor(labels).to(device)
        labels.requires_grad = True  # expect: SF101
        optimizer.zero_grad()
        probs = torch.sigmoid(model(images))
        parts = [focal_term(probs[:, c], labels, c) for c in range(n_classes)]
        loss = torch.stack(parts).mean()
        loss.backward()
        optimizer.step()
