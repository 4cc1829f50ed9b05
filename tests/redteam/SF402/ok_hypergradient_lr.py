"""Hypergradient descent: after the step, the learning rate of each group is adapted from grad dot products; parameters are not touched."""
import torch


def train(model, loader, loss_fn, lr=1e-3, beta=1e-4):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    prev_grads = None
    for x, y in loader:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        if prev_grads is not None:
            h = sum((g * pg).sum() for g, pg in zip(grads, prev_grads)).item()
            for group in optimizer.param_groups:
                group["lr"] += beta * h
        optimizer.step()
        prev_grads = grads
