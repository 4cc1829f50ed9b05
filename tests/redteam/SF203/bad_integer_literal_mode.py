"""Integer literal mode (must be reported)."""
import torch


def run(model, loader, optimizer):
    torch.autograd.set_detect_anomaly(1)  # expect: SF203
    for batch in loader:
        loss = model(batch)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
