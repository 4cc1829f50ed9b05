"""DDP with a DistributedSampler imported under an alias."""
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler as DS


def main(model, dataset, epochs):
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    model = torch.nn.parallel.DistributedDataParallel(model.cuda(rank), device_ids=[rank])
    train_sampler = DS(dataset, shuffle=True, seed=42)
    loader = DataLoader(dataset, batch_size=32, sampler=train_sampler, num_workers=4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        train_sampler.set_epoch(epoch)
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
