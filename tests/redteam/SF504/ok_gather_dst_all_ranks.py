"""All ranks call gather; only the gather list depends on the rank."""

import torch
import torch.distributed as dist


def gather_losses(loss, rank, world_size):
    bucket = [torch.zeros_like(loss) for _ in range(world_size)] if rank == 0 else None
    dist.gather(loss, gather_list=bucket, dst=0)
    if rank == 0:
        print(torch.stack(bucket).mean())
