"""The rank-0 test is folded into a flag on the args namespace (`args.save_logs = ... and is_master(args)`), which then guards the saves."""
import os

import torch
import torch.distributed as dist

from training.distributed import is_master


def main(args, model, epochs):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model)
    args.save_logs = bool(args.logs) and is_master(args)
    for epoch in range(epochs):
        if args.save_logs:
            torch.save({"epoch": epoch, "state_dict": model.state_dict()}, os.path.join(args.checkpoint_path, "latest.pt"))
