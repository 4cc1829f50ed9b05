"""Two trained models are evaluated each epoch; only the first is switched back."""
import torch
import torch.nn.functional as F


def cotrain(a, b, loader, val_loader, opt, epochs):
    a.train()
    b.train()
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            (F.mse_loss(a(x), y) + F.mse_loss(b(x), y)).backward()
            opt.step()
        a.eval()
        b.eval()  # expect: SF407
        with torch.no_grad():
            print(sum(F.mse_loss(a(x) + b(x), 2 * y).item() for x, y in val_loader))
        a.train()
