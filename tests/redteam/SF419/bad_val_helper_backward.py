"""A validation helper differentiates after model.eval(); the training pass clears only after stepping."""
import torch


def evaluate(model, loader, loss_fn):
    model.eval()
    total = 0.0
    for obs, target in loader:
        loss = loss_fn(model(obs), target)
        loss.backward()  # expect: SF419
        total += loss.item()
    model.train()
    return total


def fit(model, train_loader, val_loader, loss_fn, optimizer, epochs):
    for epoch in range(epochs):
        for obs, target in train_loader:
            loss = loss_fn(model(obs), target)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        print(epoch, evaluate(model, val_loader, loss_fn))
