"""A no_grad validation loop preceded by eval() and followed by train()."""
import torch
import torch.nn.functional as F


def fit(model, opt, train_loader, val_loader, epochs):
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            for x, y in val_loader:
                print(F.cross_entropy(model(x), y).item())
