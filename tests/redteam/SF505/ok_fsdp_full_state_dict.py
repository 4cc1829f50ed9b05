"""FSDP's state dict names keys as the inner module does."""
import torch
from torch.distributed.fsdp import FullyShardedDataParallel


def save(model, path):
    model = FullyShardedDataParallel(model)
    state = model.state_dict()
    torch.save(state, path)
