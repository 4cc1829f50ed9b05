"""`set_detect_anomaly(mode=True, check_nan=False)` still records tracebacks for every op."""
import torch


def train(model, loader, optimizer, epochs):
    torch.autograd.set_detect_anomaly(mode=True, check_nan=False)  # expect: SF203
    for _ in range(epochs):
        for batch in loader:
            optimizer.zero_grad()
            model(batch).backward()
            optimizer.step()
