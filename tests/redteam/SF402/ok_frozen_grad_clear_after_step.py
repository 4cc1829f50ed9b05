"""After the step, gradients of frozen layers are zeroed and parameters clamped (constraints), with no gradient added to parameters."""
import torch


def train(model, loader, loss_fn, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        for p in model.frozen.parameters():
            p.grad = None
        optimizer.step()
        with torch.no_grad():
            for p in model.nonneg.parameters():
                p.clamp_(min=0.0)
