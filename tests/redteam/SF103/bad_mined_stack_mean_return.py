"""Mined shape: a forecasting epoch appends each loss tensor, backpropagates each one, and returns `torch.stack(losses).mean()` as the epoch's record (bad)."""
import torch


def train_epoch(model, loader, optimizer, criterion, device):
    model.train()
    kept = []
    for series, future in loader:
        series, future = series.to(device), future.to(device)
        optimizer.zero_grad()
        mean, log_var = model(series, y=future)
        loss = criterion(mean, future, log_var)
        kept.append(loss)  # expect: SF103
        loss.backward()
        optimizer.step()
    return torch.stack(kept).mean()
