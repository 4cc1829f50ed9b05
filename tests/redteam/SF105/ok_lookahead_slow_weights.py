"""Lookahead: slow weights are copies of the parameters, pulled toward them and copied back."""
import torch


def lookahead(model, loader, optimizer, k=5, alpha=0.5):
    params = list(model.parameters())
    slow = [p.detach().clone() for p in params]
    for i, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        model.loss(x, y).backward()
        optimizer.step()
        if (i + 1) % k == 0:
            with torch.no_grad():
                for s, p in zip(slow, params):
                    s.add_(p - s, alpha=alpha)
                    p.copy_(s)
