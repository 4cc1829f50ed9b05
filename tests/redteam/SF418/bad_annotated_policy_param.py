"""A parameter with a neutral name, annotated as torch's scheduler base class, stepped every micro-batch."""
import torch
from torch.optim.lr_scheduler import LRScheduler


def train(model, loader, optimizer: torch.optim.Optimizer, policy: LRScheduler, accum: int):
    for i, (x, y) in enumerate(loader):
        (torch.nn.functional.mse_loss(model(x), y) / accum).backward()
        policy.step()  # expect: SF418
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
