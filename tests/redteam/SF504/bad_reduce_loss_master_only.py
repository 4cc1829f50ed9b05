"""A reduce to rank 0 called only by the master process (a parameter flag)."""

import torch
import torch.distributed as dist


def train_epoch(model, loader, optimizer, is_master):
    running = torch.zeros(1)
    for inputs, targets in loader:
        loss = torch.nn.functional.cross_entropy(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.detach()
    if is_master:
        dist.reduce(running, dst=0)  # expect: SF504
        print("mean loss", running.item() / dist.get_world_size())
