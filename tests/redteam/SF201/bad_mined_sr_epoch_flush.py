"""Mined shape: a super-resolution train epoch calls torch.cuda.empty_cache() right after optimizer.step() on every batch (bad)."""
import numpy as np
import torch


def train_epoch(net, loader, criterion, optimizer, device):
    batch_losses = []
    for step, (low, high) in enumerate(loader):
        low, high = low.to(device), high.to(device)
        out = net(low)
        loss = criterion(out, high)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        torch.cuda.empty_cache()  # expect: SF201
        batch_losses.append(loss.data.cpu())
    return float(np.array(batch_losses).mean())
