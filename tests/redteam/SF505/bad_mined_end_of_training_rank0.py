"""Paraphrase of a mined mp.spawn segmentation script: DDP wraps the net, and at the end rank 0 saves
the wrapper's state dict next to a results file."""
from pathlib import Path

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(rank, world_size, net, loader, epochs):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    wrapped = DDP(net.cuda(rank), device_ids=[rank])
    opt = torch.optim.Adam(wrapped.parameters())
    for _ in range(epochs):
        for data, target in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(wrapped(data.cuda(rank)), target.cuda(rank)).backward()
            opt.step()
    if rank == 0:
        out = Path("save")
        torch.save(wrapped.state_dict(), out / "model")  # expect: SF505
    dist.destroy_process_group()
