"""The last evaluation ends training: no iteration follows it."""
import torch
import torch.nn.functional as F


def fit(model, loader, val_loader, opt, max_steps):
    model.train()
    for step, (x, y) in enumerate(loader):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        if step + 1 == max_steps:
            model.eval()
            with torch.no_grad():
                print(sum(model(xv).sum().item() for xv, _ in val_loader))
            break
