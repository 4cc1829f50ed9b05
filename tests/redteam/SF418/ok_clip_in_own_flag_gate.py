"""The clip runs under a flag computed from the same modulo as the step."""
import torch


def train(model, loader, opt, accum):
    for i, (x, y) in enumerate(loader):
        (torch.nn.functional.mse_loss(model(x), y) / accum).backward()
        sync = (i + 1) % accum == 0
        if sync:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if (i + 1) % accum == 0:
            opt.step()
            opt.zero_grad()
