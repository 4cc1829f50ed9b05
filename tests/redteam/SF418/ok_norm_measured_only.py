"""The gradient norm is only measured on every micro-batch (an infinite max_norm clips nothing)."""
import torch


def train(model, loader, opt, accum):
    for i, (x, y) in enumerate(loader):
        (torch.nn.functional.mse_loss(model(x), y) / accum).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
        if (i + 1) % accum == 0:
            opt.step()
            opt.zero_grad()
