"""An evaluation helper gathering predictions under `local_rank in [-1, 0]`."""

import torch
import torch.distributed as dist


def evaluate(args, model, dataloader):
    preds = []
    for batch in dataloader:
        with torch.no_grad():
            preds.append(model(batch).argmax(-1))
    preds = torch.cat(preds)
    if args.local_rank in [-1, 0]:
        buckets = [torch.zeros_like(preds) for _ in range(dist.get_world_size())]
        dist.all_gather(buckets, preds)  # expect: SF504
        return torch.cat(buckets)
    return None
