"""Per-epoch training function of another file: it only iterates the loader."""
import torch


def train_one_epoch(model, loader, optimizer, epoch):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
