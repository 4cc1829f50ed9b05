"""Training step wrapped in try/finally whose finally clause empties the cache, so it runs on every step (bad)."""
import torch


def train(model, loader, optimizer, criterion, device):
    model.train()
    for step, (x, y) in enumerate(loader):
        try:
            out = model(x.to(device))
            loss = criterion(out, y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        finally:
            torch.cuda.empty_cache()  # expect: SF201
        if step % 100 == 0:
            print(step, loss.item())
