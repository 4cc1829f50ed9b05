"""torchrun script that saves model, optimizer and epoch every epoch from every rank."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(args, model, loader, optimizer):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    for epoch in range(args.epochs):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
        torch.save(state, os.path.join(args.output_dir, "checkpoint.pth"))  # expect: SF503
