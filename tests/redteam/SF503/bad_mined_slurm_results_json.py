"""Paraphrase of a mined SLURM DDP script: after training, every rank writes the same results JSON (and a CSV) under the experiment folder."""
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from project.training import ClassifierLoop


def init_group(rank, world):
    dist.init_process_group("nccl", rank=rank, world_size=world)


if __name__ == "__main__":
    world = int(os.environ["WORLD_SIZE"])
    rank = int(os.environ["SLURM_PROCID"])
    init_group(rank, world)
    local = rank % torch.cuda.device_count()
    torch.cuda.set_device(local)
    net = DistributedDataParallel(torch.nn.LSTM(8, 16).to(local), device_ids=[local])
    outcome = ClassifierLoop(net, device=local).fit(epochs=45)
    summary_path = f"/data/logs/lstm/exp2/summary.json"
    with open(summary_path, "w") as out:  # expect: SF503
        json.dump(outcome, out, indent=2)
