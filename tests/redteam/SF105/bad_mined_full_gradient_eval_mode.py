"""Mined shape: the full gradient over a loader in eval mode: zeros_like per parameter, then `acc.add_(p.grad.detach(), alpha=batch)` for every batch (bad)."""
import torch


def full_gradient(model, loader, loss_fn, device):
    model.eval()
    totals = [torch.zeros_like(p) for p in model.parameters()]  # expect: SF105
    count = 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        size = inputs.shape[0]
        model.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        for acc, p in zip(totals, model.parameters()):
            acc.add_(p.grad.detach(), alpha=size)
        count += size
    return [acc / count for acc in totals]


def report(model, loader, loss_fn, device):
    grads = full_gradient(model, loader, loss_fn, device)
    print(sum(g.pow(2).sum() for g in grads).sqrt().item())
