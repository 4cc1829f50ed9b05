"""Hyper-parameter sweep: each trial builds a model, trains it fully, deletes it, and flushes the cache before the next trial."""
import gc

import torch


def train_model(model, loader, lr, epochs=3):
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    for _ in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
    return loss.item()


def sweep(build_model, loader, lrs):
    results = {}
    for lr in lrs:
        model = build_model().cuda()
        results[lr] = train_model(model, loader, lr)
        del model
        gc.collect()
        torch.cuda.empty_cache()
    return results
