"""`Trainer` keeps a rank-0 test in `self.is_main`; a module-level `save` receives some trainer as a parameter and
writes only when `trainer.is_main`. The file does not show the parameter's class, so what any class stores under
that attribute may be what it reads: the save is guarded (near miss)."""
import torch
import torch.distributed as dist


class Trainer:
    def __init__(self, model):
        self.model = torch.nn.parallel.DistributedDataParallel(model)
        self.is_main = dist.get_rank() == 0


def save(trainer, path):
    if trainer.is_main:
        torch.save(trainer.model.module.state_dict(), path)


def main(model, runs):
    dist.init_process_group("nccl")
    for run in runs:
        save(run(Trainer(model)), "last.pt")
