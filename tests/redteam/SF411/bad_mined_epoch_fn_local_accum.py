"""Mined (image classifier epoch function): a local accumulation count of 4, every batch's mean loss backpropagated undivided."""
import torch


def train_one_epoch(model, loader, criterion, optimizer, device):
    model.train()
    total = 0.0
    accum = 4
    for i, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        y_hat = model(x)
        loss = criterion(y_hat, y)
        total += loss.item()
        loss.backward()  # expect: SF411
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
    return total / len(loader)
