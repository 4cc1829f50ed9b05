"""A launcher opening one log file per rank, the path formatted from the rank."""
import os

import torch.distributed as dist


def open_logs(pattern, world_size):
    dist.init_process_group("gloo")
    global_rank = int(os.environ["RANK"])
    filename = pattern.format(rank=global_rank, world_size=world_size)
    return open(filename, "a+")
