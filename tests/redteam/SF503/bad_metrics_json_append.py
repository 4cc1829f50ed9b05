"""Each rank appends its metrics to one shared JSON-lines file after evaluation."""
import json

import torch
import torch.distributed as dist


def evaluate(model, loader, out_file):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model)
    total = sum(model(x).sum().item() for x in loader)
    with open(out_file, mode="a") as handle:  # expect: SF503
        handle.write(json.dumps({"score": total}) + "\n")
