"""Both branches of the rank test broadcast: every rank joins."""

import torch.distributed as dist


def share_config(rank, config):
    if rank == 0:
        payload = [config]
        dist.broadcast_object_list(payload, src=0)
    else:
        payload = [None]
        dist.broadcast_object_list(payload, src=0)
    return payload[0]
