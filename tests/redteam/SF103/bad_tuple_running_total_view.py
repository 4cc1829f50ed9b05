"""Segmentation loop: running loss and pixel count updated together in one tuple assignment; the loss is reshaped with `.view(1)`, which keeps its graph (bad)."""
import torch
import torch.nn.functional as F


def train_epoch(net, loader, optimizer, device):
    net.train()
    running, pixels = torch.zeros(1, device=device), 0
    for images, masks in loader:
        logits = net(images.to(device))
        loss = F.cross_entropy(logits, masks.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running, pixels = running + loss.view(1) * masks.numel(), pixels + masks.numel()  # expect: SF103
    return (running / pixels).item()
