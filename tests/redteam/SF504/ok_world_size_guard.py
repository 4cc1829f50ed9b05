"""World-size and initialisation tests are the same on every rank."""

import torch.distributed as dist


def average(tensor):
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        dist.all_reduce(tensor)
        tensor /= dist.get_world_size()
    return tensor
