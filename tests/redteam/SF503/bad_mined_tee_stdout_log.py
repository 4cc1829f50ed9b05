"""Paraphrase of a mined contrastive-training script: every rank opens the same log.txt for writing and tees stdout into it."""
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class Tee:
    def __init__(self, *streams):
        self.streams = streams

    def write(self, text):
        for stream in self.streams:
            stream.write(text)

    def flush(self):
        for stream in self.streams:
            stream.flush()


def setup():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank


def main(args, backbone):
    local_rank = setup()
    run_dir = os.path.join(args.save_dir, args.exp_name)
    os.makedirs(run_dir, exist_ok=True)
    sys.stdout = Tee(sys.stdout, open(os.path.join(run_dir, "log.txt"), "w", encoding="utf-8"))  # expect: SF503
    model = DistributedDataParallel(backbone.to(local_rank), device_ids=[local_rank])
    return model
