"""Near miss: `int(...)` and `bool(...)` of Python values in the step (lengths, config), no tensor read."""
import torch


def train(model, loader, optimizer, device, cfg):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        batch = int(len(x))
        verbose = bool(cfg.get("verbose"))
        if verbose:
            print("batch", batch)
