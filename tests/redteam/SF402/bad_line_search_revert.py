"""'Try the step, revert if the loss got worse' with Adam: the revert adds lr * grad back to each parameter (bad)."""
import torch


def guarded_step(model, optimizer, closure, lr):
    optimizer.zero_grad()
    old_loss = closure()
    old_loss.backward()
    optimizer.step()
    with torch.no_grad():
        new_loss = closure()
        if new_loss > old_loss:
            for p in model.parameters():
                if p.grad is not None:
                    p.add_(lr * p.grad)  # expect: SF402
    return new_loss


def train(model, batches, loss_fn, lr=1e-3):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for x, y in batches:
        guarded_step(model, optimizer, lambda: loss_fn(model(x), y), lr)
