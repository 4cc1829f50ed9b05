"""Near miss: an evaluate() without a mode switch, called only inside torch.no_grad()."""
import torch


def evaluate(model, loader):
    total = 0.0
    for x, y in loader:
        total += (model(x).argmax(1) == y).float().sum().item()
    return total


def fit(model, train_loader, val_loader, optimizer, criterion):
    for x, y in train_loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        print(evaluate(model, val_loader))
