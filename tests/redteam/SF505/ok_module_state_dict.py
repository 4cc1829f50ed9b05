"""The inner module's state dict is saved."""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def save(model, rank, path):
    model = DDP(model, device_ids=[rank])
    if rank == 0:
        torch.save(model.module.state_dict(), path)
