"""Ranks outside the process group return before the group's all_reduce: only the group's members
take part in its collective, which is what the group is for."""
import torch.distributed as dist


def average_parameters(params, group):
    group = group or dist.group.WORLD
    if dist._rank_not_in_group(group):
        return
    flat = params.clone()
    dist.all_reduce(flat, group=group)
    params.copy_(flat / dist.get_world_size(group))
