"""A step on every iteration: clipping and scheduling per iteration are right; the modulo only logs."""
import torch


def train(model, loader, opt, scheduler, log_every=50):
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        scheduler.step()
        if i % log_every == 0:
            print(i, loss.item())
