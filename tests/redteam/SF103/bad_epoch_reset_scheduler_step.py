"""The sum is reset once per epoch, next to a scheduler step; the optimizer steps every batch in between."""
import torch.nn.functional as F


def fit(model, loader, optimizer, scheduler, epochs):
    for epoch in range(epochs):
        total = 0.0
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss  # expect: SF103
        scheduler.step()
        print(epoch, f"{total / len(loader):.4f}")
