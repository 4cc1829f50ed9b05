"""The flag on the args namespace says only whether logs were asked for, the same on every rank: every process
still writes the epoch checkpoint."""
import os

import torch
import torch.distributed as dist


def save_epoch(args, model, epoch):
    if args.save_logs:
        state = {"epoch": epoch, "state_dict": model.state_dict()}
        if epoch == args.epochs or epoch % args.save_frequency == 0:
            torch.save(state, os.path.join(args.checkpoint_path, f"epoch_{epoch}.pt"))  # expect: SF503


def main(args, model):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model)
    args.save_logs = bool(args.logs)
    for epoch in range(args.epochs):
        save_epoch(args, model, epoch + 1)
