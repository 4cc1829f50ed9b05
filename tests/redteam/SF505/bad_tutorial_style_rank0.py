"""A torchrun script that wraps with DDP and saves the wrapper's state dict on rank 0."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = nn.Linear(10, 10).cuda(local_rank)
    ddp_model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.01)
    for _ in range(10):
        optimizer.zero_grad()
        ddp_model(torch.randn(20, 10, device=local_rank)).sum().backward()
        optimizer.step()
    if dist.get_rank() == 0:
        torch.save(ddp_model.state_dict(), "model.pt")  # expect: SF505
