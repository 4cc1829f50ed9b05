"""DataParallel behind a GPU-count test (a conditional wrap), saved at every epoch."""
import torch
import torch.nn as nn


def fit(model, loader, optimizer, epochs, out):
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        torch.save(model.state_dict(), f"{out}/epoch{epoch}.pt")  # expect: SF505
