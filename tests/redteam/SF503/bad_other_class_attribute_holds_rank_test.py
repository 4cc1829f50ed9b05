"""`MetricsLogger` keeps a rank-0 test in `self.enabled`; `Trainer` has its own `enabled`, a class attribute
(checkpointing switched on, the same on every rank). The trainer's `if self.enabled:` guards nothing per rank:
every process writes the checkpoint. What another class stores under the same attribute name is not this
object's flag (bad)."""
import torch
import torch.distributed as dist


class MetricsLogger:
    def __init__(self):
        self.enabled = dist.get_rank() == 0

    def log(self, **values):
        if self.enabled:
            print(values)


class Trainer:
    enabled = True

    def __init__(self, model):
        self.model = torch.nn.parallel.DistributedDataParallel(model)
        self.logger = MetricsLogger()

    def fit(self, loader, opt):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        if self.enabled:
            torch.save(self.model.module.state_dict(), "last.pt")  # expect: SF503


def main(model, loader, opt):
    dist.init_process_group("nccl")
    Trainer(model).fit(loader, opt)
