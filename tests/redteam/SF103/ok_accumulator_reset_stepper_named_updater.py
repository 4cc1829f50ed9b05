"""Micro-batch accumulation: the accumulator is reset at the top of every step; the optimizer is called `updater`."""
import torch.nn.functional as F


def run(model, next_batch, updater, steps, micro_batches):
    for step in range(steps):
        window = 0.0
        for _ in range(micro_batches):
            inputs, targets = next_batch()
            part = F.cross_entropy(model(inputs), targets) / micro_batches
            window += part
            part.backward()
        updater.step()
        updater.zero_grad(set_to_none=True)
        print(f"step {step}: {window.item():.4f}")
