"""`torch.empty_like(p).zero_()` buffers, averaged over a loader for a gradient-noise estimate."""
import torch


def grad_noise(model, loader, criterion):
    weights = list(model.parameters())
    mean_grad = [torch.empty_like(w).zero_() for w in weights]  # expect: SF105
    count = 0
    for x, y in loader:
        model.zero_grad()
        criterion(model(x), y).backward()
        for m, w in zip(mean_grad, weights):
            m.add_(w.grad, alpha=1.0 / len(loader))
        count += 1
    return sum(float(m.pow(2).sum()) for m in mean_grad), count
