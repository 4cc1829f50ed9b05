"""The loader of the same file removes the prefix key by key."""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def save(model, path):
    wrapped = DDP(model)
    torch.save(wrapped.state_dict(), path)


def load(model, path):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict({key.removeprefix("module."): value for key, value in state.items()})
