"""The passes are a `while` loop over a data iterator, not a `for` loop."""
import torch


def grad_mean(model, data_iter, n):
    params = [p for p in model.parameters() if p.requires_grad]
    acc = [torch.zeros_like(p) for p in params]  # expect: SF105
    seen = 0
    while seen < n:
        x, y = next(data_iter)
        model.zero_grad()
        model.loss(x, y).backward()
        for a, p in zip(acc, params):
            a.add_(p.grad)
        seen += 1
    return sum(float(a.abs().sum()) for a in acc) / n
