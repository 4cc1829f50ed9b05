"""The learner saves when its `device_index` is 0, but the constructions pass the rank in one place and a
configured device number (the same on every process) in another: not every caller hands it a rank, so the
test is no rank guard and every process of the evaluation run writes the file (bad)."""
import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class Learner:
    def __init__(self, net, device_index):
        self.device_index = device_index
        self.net = DistributedDataParallel(net.to(device_index), device_ids=[device_index])

    def save(self, path):
        if self.device_index == 0:
            torch.save(self.net.module.state_dict(), path)  # expect: SF503


def train(local_rank, world_size):
    dist.init_process_group("nccl", rank=local_rank, world_size=world_size)
    Learner(torch.nn.Linear(4, 1), local_rank).save("train.pt")


def evaluate(args):
    dist.init_process_group("nccl")
    Learner(torch.nn.Linear(4, 1), args.device).save("eval.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", type=int, default=0)
    evaluate(parser.parse_args())
