"""Mined (a detector's validator): rank 0 gathers into a list, every other rank sends with `None` in the `elif`; the
two branches together are every rank of the run (`RANK` is -1 only outside one), so each rank reaches the gather."""
import os

import torch.distributed as dist

RANK = int(os.getenv("RANK", -1))


class Validator:
    def __init__(self):
        self.stats = {"tp": [], "conf": []}

    def gather_stats(self):
        if RANK == 0:
            gathered = [None] * dist.get_world_size()
            dist.gather_object(self.stats, gathered, dst=0)
            self.stats = {k: [v for part in gathered for v in part[k]] for k in self.stats}
        elif RANK > 0:
            dist.gather_object(self.stats, None, dst=0)
            self.stats = {k: [] for k in self.stats}
