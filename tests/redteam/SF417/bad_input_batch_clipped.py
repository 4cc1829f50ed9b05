"""The input batch drawn from the DataLoader is handed to clip_grad_norm_ (it has no gradient at all)."""
import torch
from torch.utils.data import DataLoader


def train(model, dataset, optimizer, criterion):
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    for inputs, targets in loader:
        loss = criterion(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(inputs, 1.0)  # expect: SF417
        optimizer.step()
