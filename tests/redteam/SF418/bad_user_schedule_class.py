"""A project schedule class constructed with the optimizer as a keyword, stepped per micro-batch."""
import torch

from .sched import InverseSqrtWarmup


def train(model, loader, steps_per_update=4):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    schedule = InverseSqrtWarmup(optimizer=optimizer, warmup=4000)
    for k, batch in enumerate(loader):
        loss = model(**batch).loss / steps_per_update
        loss.backward()
        schedule.step()  # expect: SF418
        if (k + 1) % steps_per_update == 0:
            optimizer.step()
            optimizer.zero_grad()
