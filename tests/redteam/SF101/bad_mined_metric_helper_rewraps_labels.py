"""Mined shape: a masked-BCE helper re-wraps its numpy operands with torch.tensor(..., requires_grad=True).to(device)
before calling nn.BCELoss; the labels are the loss target (bad)."""
import numpy as np
import torch
import torch.nn as nn


def masked_bce(probabilities, labels, device=torch.device("cpu")):
    labels = torch.tensor(labels, requires_grad=True).to(device)  # expect: SF101
    criterion = nn.BCELoss()
    return criterion(probabilities, labels)


def train(model, windows, optimizer, device):
    for inputs, flags in windows:
        probabilities = torch.sigmoid(model(torch.as_tensor(inputs, device=device)))
        loss = masked_bce(probabilities, np.asarray(flags, dtype=np.float32), device=device)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
