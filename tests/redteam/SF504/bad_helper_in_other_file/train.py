"""The helper of another file that all-reduces, called by rank 0 only."""

import torch
import torch.distributed as dist

from comm import mean_over_ranks


def validate(model, loader):
    total = torch.zeros(1)
    for x, y in loader:
        total += torch.nn.functional.mse_loss(model(x), y)
    if dist.get_rank() == 0:
        print("val loss", mean_over_ranks(total).item())  # expect: SF504
