"""The usual epoch loop: train, then validate, with train() called once before the loop."""
import torch
import torch.nn.functional as F


def fit(model, optimizer, train_loader, val_loader, epochs):
    model.train()
    for epoch in range(epochs):
        for x, y in train_loader:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        model.eval()  # expect: SF407
        with torch.no_grad():
            for x, y in val_loader:
                print(F.cross_entropy(model(x), y).item())
