"""Saved from the DDP wrapper and loaded back into the DDP wrapper (the tutorial's round trip)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def checkpoint_demo(model, rank, path):
    ddp = DDP(model, device_ids=[rank])
    if rank == 0:
        torch.save(ddp.state_dict(), path)
    dist.barrier()
    ddp.load_state_dict(torch.load(path, map_location={"cuda:0": f"cuda:{rank}"}))
