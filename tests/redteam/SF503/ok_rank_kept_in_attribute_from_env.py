"""The shape of a torchrun tutorial trainer: the process's rank is read once into an attribute whose
name says nothing about ranks, and the snapshot method is only called under a test of it."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class SnapshotTrainer:
    def __init__(self, net: torch.nn.Module, every: int, where: str) -> None:
        self.worker = int(os.environ["LOCAL_RANK"])
        self.net = DistributedDataParallel(net.to(self.worker), device_ids=[self.worker])
        self.every = every
        self.where = where

    def _snapshot(self, epoch: int) -> None:
        torch.save({"state": self.net.module.state_dict(), "epoch": epoch}, self.where)

    def fit(self, epochs: int) -> None:
        for epoch in range(epochs):
            if self.worker == 0 and epoch % self.every == 0:
                self._snapshot(epoch)


def main() -> None:
    dist.init_process_group("nccl")
    SnapshotTrainer(torch.nn.Linear(4, 1), every=2, where="snapshot.pt").fit(10)
    dist.destroy_process_group()
