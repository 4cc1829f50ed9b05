"""Tabular regression script: targets go through torch.from_numpy(...).float().to(device).requires_grad_(True) into MSELoss (bad)."""
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(32, 128), nn.GELU(), nn.Linear(128, 1)).to(device)
loss_fn = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)


def run_epoch(batches):
    total = 0.0
    for x_np, y_np in batches:
        x = torch.from_numpy(x_np).float().to(device)
        y = torch.from_numpy(y_np).float().to(device).requires_grad_(True)  # expect: SF101
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / max(len(batches), 1)
