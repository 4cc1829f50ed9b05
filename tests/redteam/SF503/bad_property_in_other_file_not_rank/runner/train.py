"""The trainer's test of its options object (a property of another module's class) is true on every rank: each
process writes the same checkpoint file."""
import os

import torch
import torch.distributed as dist

from .arguments import RunArguments


class Trainer:
    def __init__(self, model, args: RunArguments = None):
        if args is None:
            args = RunArguments(output_dir="out")
        self.args = args
        self.model = torch.nn.parallel.DistributedDataParallel(model)

    def save(self, step):
        if self.args.writes_files:
            torch.save(self.model.state_dict(), os.path.join(self.args.output_dir, f"step-{step}.pt"))  # expect: SF503


def main(model):
    dist.init_process_group("nccl")
    trainer = Trainer(model, RunArguments(output_dir="checkpoints"))
    for step in range(100):
        trainer.save(step)
