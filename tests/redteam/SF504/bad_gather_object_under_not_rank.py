"""all_gather_object under `if not rank:`: the other ranks never join."""

import torch.distributed as dist


def collect_predictions(predictions, rank, world_size):
    if not rank:
        everyone = [None] * world_size
        dist.all_gather_object(everyone, predictions)  # expect: SF504
        return [p for part in everyone for p in part]
    return predictions
