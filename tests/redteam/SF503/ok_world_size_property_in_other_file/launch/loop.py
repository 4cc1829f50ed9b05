"""The random states go to one file when a single process runs, one file per process otherwise (the shape of HF
Trainer's RNG checkpoint, paraphrased): a single-process run has no other rank to write the same file."""
import os

import torch
import torch.distributed as dist

from .options import LaunchOptions


class Loop:
    def __init__(self, model, options: LaunchOptions):
        self.options = options
        self.model = torch.nn.parallel.DistributedDataParallel(model)

    def save_random_state(self, folder):
        states = {"cpu": torch.random.get_rng_state()}
        if self.options.processes <= 1:
            torch.save(states, os.path.join(folder, "rng_state.pth"))
        else:
            torch.save(states, os.path.join(folder, f"rng_state_{dist.get_rank()}.pth"))


def main(model):
    dist.init_process_group("nccl")
    Loop(model, LaunchOptions(output_dir="out")).save_random_state("out")
