"""Mined (EEG classifier): `nn.CrossEntropyLoss()(output, target)` built inline each batch, undivided, a step every 4 batches."""
import torch
from torch import nn


def train(writer, model, optimizer, device, loader, epoch):
    model.train()
    running = 0.0
    for idx, (data, target) in enumerate(loader):
        data, target = data.to(device=device, dtype=torch.float), target.to(device)
        output = model(data)
        loss = nn.CrossEntropyLoss()(output, target)
        loss.backward()  # expect: SF411
        running += loss.item()
        if (idx + 1) % 4 == 0:
            optimizer.step()
            optimizer.zero_grad()
        if (idx + 1) % 80 == 0:
            writer.add_scalar("Loss/train", running / 20, epoch)
            running = 0.0
