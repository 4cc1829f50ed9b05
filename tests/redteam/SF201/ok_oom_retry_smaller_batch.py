"""OOM recovery: on torch.cuda.OutOfMemoryError the step is retried in two halves after freeing the cache (inside the except handler)."""
import torch


def step_with_oom_retry(model, optimizer, x, y, criterion):
    try:
        loss = criterion(model(x), y)
        loss.backward()
    except torch.cuda.OutOfMemoryError:
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.empty_cache()
        for xs, ys in zip(x.chunk(2), y.chunk(2)):
            loss = criterion(model(xs), ys) / 2
            loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()


def train(model, optimizer, loader, criterion):
    for x, y in loader:
        step_with_oom_retry(model, optimizer, x.cuda(), y.cuda(), criterion)
