"""Non-step iterations skip the rest with `continue`; clip and scheduler then run once per update."""
import torch


def train(model, loader, opt, sched, accum):
    for i, (x, y) in enumerate(loader):
        (torch.nn.functional.mse_loss(model(x), y) / accum).backward()
        if (i + 1) % accum != 0:
            continue
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
