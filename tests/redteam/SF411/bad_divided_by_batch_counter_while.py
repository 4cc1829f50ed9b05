"""Accumulation in a while loop over an iterator: the loss is 'averaged' by the running batch counter."""
import torch.nn.functional as F


def train(model, it, optimizer, accumulate, max_batches):
    n_batches = 0
    while n_batches < max_batches:
        x, y = next(it)
        n_batches = n_batches + 1
        loss = F.nll_loss(model(x), y) / n_batches
        loss.backward()  # expect: SF411
        if n_batches % accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
