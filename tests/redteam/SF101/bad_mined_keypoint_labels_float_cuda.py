"""Mined shape: keypoint training decodes heatmap labels to coordinates on the host, re-wraps them with
torch.tensor(..., requires_grad=True).float().cuda() and hands them to a criterion parameter (bad)."""
import numpy as np
import torch


def heatmaps_to_coords(heatmaps):
    flat = heatmaps.reshape(heatmaps.shape[0], heatmaps.shape[1], -1)
    index = flat.argmax(-1)
    return np.stack([index % heatmaps.shape[-1], index // heatmaps.shape[-1]], axis=-1).astype(np.float32)


def train_one_epoch(loader, model, criterion, optimizer):
    model.train()
    for images, heatmaps, visible in loader:
        images = images.cuda()
        predicted = model(images) * visible.cuda()
        coords = heatmaps_to_coords(heatmaps.detach().cpu().numpy())
        coords = torch.tensor(coords, requires_grad=True).float().cuda()  # expect: SF101
        loss = criterion(predicted, coords)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        error = np.abs(predicted.detach().cpu().numpy() - coords.detach().cpu().numpy()).mean()
        print(loss.item(), error)
