"""Per-epoch rebuild with a decayed lr: the steps run in the inner batch loop (a stage boundary)."""
import torch

for epoch in range(epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr * 0.5 ** epoch)
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
