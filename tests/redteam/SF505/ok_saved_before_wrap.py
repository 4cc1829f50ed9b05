"""The initial weights are saved before the wrap."""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def setup(model, path):
    torch.save(model.state_dict(), path)
    model = DDP(model)
    return model
