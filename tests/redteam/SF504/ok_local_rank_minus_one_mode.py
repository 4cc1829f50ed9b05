"""`local_rank != -1` tests whether the run is distributed at all: the same answer on every rank."""
import torch


def average_loss(args, loss):
    if args.local_rank != -1:
        torch.distributed.all_reduce(loss)
        loss = loss / torch.distributed.get_world_size()
    if args.local_rank == -1 or torch.distributed.get_rank() == 0:
        print(loss.item())
    return loss
