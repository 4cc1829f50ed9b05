"""An attribute set from the world size is the same on every rank: a test of it guards nothing, and
every process still writes the checkpoint."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class SnapshotTrainer:
    def __init__(self, net: torch.nn.Module, where: str) -> None:
        self.procs = int(os.environ["WORLD_SIZE"])
        self.net = DistributedDataParallel(net)
        self.where = where

    def _snapshot(self, epoch: int) -> None:
        torch.save({"state": self.net.module.state_dict(), "epoch": epoch}, self.where)  # expect: SF503

    def fit(self, epochs: int) -> None:
        for epoch in range(epochs):
            if self.procs > 0:
                self._snapshot(epoch)


def main() -> None:
    dist.init_process_group("gloo")
    SnapshotTrainer(torch.nn.Linear(4, 1), where="snapshot.pt").fit(10)
