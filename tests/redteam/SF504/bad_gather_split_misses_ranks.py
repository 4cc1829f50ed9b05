"""Rank 0 gathers and rank 1 sends, but ranks 2 and up take neither branch: the gather waits for them forever."""
import torch.distributed as dist


def gather_stats(stats):
    rank = dist.get_rank()
    if rank == 0:
        gathered = [None] * dist.get_world_size()
        dist.gather_object(stats, gathered, dst=0)
        return gathered
    elif rank == 1:
        dist.gather_object(stats, None, dst=0)  # expect: SF504
    return None
