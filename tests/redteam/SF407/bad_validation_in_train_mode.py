"""bad validation in train mode."""
import torch
import torch.nn.functional as F


def fit(model, optimizer, train_loader, val_loader, epochs):
    model.train()
    for epoch in range(epochs):
        for x, y in train_loader:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        with torch.no_grad():
            val = 0.0
            for x, y in val_loader:
                val += F.cross_entropy(model(x), y).item()  # expect: SF407
        print(epoch, val)
