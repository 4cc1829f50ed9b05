"""A trainer class wraps in __init__ and saves a resume checkpoint dict from another method."""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


class Runner:
    def __init__(self, model, optimizer, gpu):
        self.net = DDP(model.to(gpu), device_ids=[gpu])
        self.optimizer = optimizer
        self.epoch = 0

    def checkpoint(self, path):
        state = {
            "epoch": self.epoch,
            "state_dict": self.net.state_dict(),  # expect: SF505
            "optimizer": self.optimizer.state_dict(),
        }
        torch.save(state, path)
