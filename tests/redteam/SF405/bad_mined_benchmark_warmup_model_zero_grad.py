"""Mined (transformer benchmark): warm-up passes run backward, `model.zero_grad()`, then the optimizer handed in as a parameter steps."""
import torch


def benchmark(model, x, optimizer, num_warmup):
    for _ in range(num_warmup):
        logits = model(x)
        loss = logits.sum()
        loss.backward()
        model.zero_grad()  # expect: SF405
        optimizer.step()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
