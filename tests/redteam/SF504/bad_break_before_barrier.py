"""Rank 0 breaks out of the loop early; the others wait at the next barrier."""

import torch.distributed as dist


def run(model, loader, optimizer, max_steps):
    rank = dist.get_rank()
    for step, batch in enumerate(loader):
        loss = model(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if rank == 0 and step >= max_steps:
            break
        dist.barrier()  # expect: SF504
