"""Mined (classification trainer): `from torch.cuda import amp` once, then `amp.GradScaler(enabled=...)` far below."""
import torch
from torch.cuda import amp


def fit(model, loader, optimizer, device):
    on_gpu = device.type != "cpu"
    scaler = amp.GradScaler(enabled=on_gpu)  # expect: SF302
    loss_fn = torch.nn.CrossEntropyLoss()
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        with torch.autocast(device.type, enabled=on_gpu):
            loss = loss_fn(model(images), labels)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
