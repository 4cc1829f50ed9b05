"""SWA running mean of the weights: a copy of the parameters, not an empty sum."""
import torch


def swa(model, loader, optimizer, epochs):
    avg = [p.detach().clone() for p in model.parameters()]
    for n in range(1, epochs + 1):
        for x, y in loader:
            optimizer.zero_grad()
            model.loss(x, y).backward()
            optimizer.step()
        with torch.no_grad():
            for a, p in zip(avg, model.parameters()):
                a.add_((p - a) / (n + 1))
    return avg
