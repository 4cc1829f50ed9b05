"""Mined (text classifier script): `criterion = nn.CrossEntropyLoss()` fed `F.softmax(outputs)` of `model.forward(batch)` inside the training loop."""
import torch.nn.functional as F
from torch import nn, optim


def fit(model, train_loader, epochs):
    losses = []
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    for _ in range(epochs):
        for batch in train_loader:
            optimizer.zero_grad()
            outputs = model.forward(batch)
            loss = criterion(F.softmax(outputs), batch[1])  # expect: SF410
            loss.backward()
            losses.append(loss.item())
            optimizer.step()
    return losses
