"""Near miss of the serve/stop protocol: the worker ranks scatter and leave early, but what rank 0 runs after the
`if` is an all-reduce, another collective: the workers never join it, rank 0 waits forever."""
import torch
import torch.distributed as dist


def sync_stats(stats):
    if dist.get_rank() != 0:
        box = [None]
        dist.scatter_object_list(box, None, src=0)  # expect: SF504
        return box[0]
    total = torch.tensor([stats])
    dist.all_reduce(total)  # expect: SF504
    return total.item()
