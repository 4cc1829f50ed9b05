"""Undo that reads the current lr from the scheduler (`scheduler.get_last_lr()[0]`) after an Adam step, via sub_ of a negative step (bad)."""
import torch


def train(model, loader, criterion, epochs):
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs * len(loader))
    for _ in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
            lr = scheduler.get_last_lr()[0]
            if not torch.isfinite(model(x)).all():
                for p in model.parameters():
                    p.data.sub_(-lr * p.grad.data)  # expect: SF402
            scheduler.step()
