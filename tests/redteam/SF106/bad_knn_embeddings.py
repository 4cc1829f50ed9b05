"""Embedding extraction for a k-NN monitor: eval mode, no no_grad, features stacked."""
import torch


def extract_features(backbone, memory_loader, device):
    backbone.eval()
    feats = []
    for images, _ in memory_loader:
        feats.append(backbone(images.to(device)).flatten(1).cpu())  # expect: SF106
    return torch.cat(feats)
