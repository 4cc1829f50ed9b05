"""The trainer writes its checkpoints under tests of its options object, whose class (another module) answers
them with the process's rank: a property, and a method called without arguments."""
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
            torch.save(self.model.state_dict(), os.path.join(self.args.output_dir, f"step-{step}.pt"))
        if self.args.keeps_history():
            with open(os.path.join(self.args.output_dir, "history.txt"), "a") as log:
                log.write(f"{step}\n")


def main(model):
    dist.init_process_group("nccl")
    trainer = Trainer(model, RunArguments(output_dir="checkpoints"))
    for step in range(100):
        trainer.save(step)
