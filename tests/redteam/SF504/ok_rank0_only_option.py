"""`rank0_only` is an option every rank is passed alike (FSDP-style), not a test of the rank."""
import torch.distributed as dist


def consolidate(state, rank0_only=False):
    if rank0_only:
        holder = [state]
        dist.broadcast_object_list(holder, src=0)
        state = holder[0]
    return state
