"""The cleanup function is bound to a local name (`flush = torch.cuda.empty_cache`) and called after every step (bad)."""
import torch


def train(model, loader, optimizer, loss_fn):
    flush = torch.cuda.empty_cache
    for xb, yb in loader:
        pred = model(xb.cuda())
        loss = loss_fn(pred, yb.cuda())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        flush()  # expect: SF201
