"""Paraphrase of mined hang-reproduction scripts: every rank all-reduces once, then rank 0 alone
all-reduces again while the others sleep or return."""
import time

import torch
import torch.distributed as dist


def worker(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    value = torch.ones(4)
    dist.all_reduce(value)
    if rank == 0:
        dist.all_reduce(value)  # expect: SF504
    else:
        time.sleep(30)
