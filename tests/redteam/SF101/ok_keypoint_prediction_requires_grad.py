"""Near miss: the keypoint step calls `.requires_grad_()` on the masked *prediction* (the loss input, already part of
the graph); the decoded coordinates are plain float tensors (legitimate for this rule)."""
import numpy as np
import torch


def heatmaps_to_coords(heatmaps):
    flat = heatmaps.reshape(heatmaps.shape[0], heatmaps.shape[1], -1)
    index = flat.argmax(-1)
    return np.stack([index % heatmaps.shape[-1], index // heatmaps.shape[-1]], axis=-1).astype(np.float32)


def train_one_epoch(loader, model, criterion, optimizer):
    model.train()
    for images, heatmaps, visible in loader:
        predicted = torch.multiply(model(images.cuda()), visible.cuda()).requires_grad_()
        coords = torch.tensor(heatmaps_to_coords(heatmaps.numpy())).float().cuda()
        loss = criterion(predicted, coords)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
