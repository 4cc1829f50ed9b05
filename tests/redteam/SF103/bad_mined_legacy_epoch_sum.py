"""Mined shape: a segmentation loop adds the loss tensor itself to a per-epoch sum (`epoch_loss += loss`) before backward, and only prints the sum after the epoch (bad)."""
import torch


def train(model, loader, criterion, optimizer, epochs):
    for e in range(epochs):
        epoch_loss = 0
        for ix, (image, target) in enumerate(loader, start=1):
            output = model(image)
            loss = criterion(output, target.long())
            if ix % 20 == 0:
                print("step loss", loss.item())
            epoch_loss += loss  # expect: SF103
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print("epoch", e, "mean loss", epoch_loss.data / ix)
