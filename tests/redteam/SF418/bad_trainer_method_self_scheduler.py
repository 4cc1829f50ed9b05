"""Trainer class: the scheduler lives on self, built in __init__ from the optimizer; stepped every micro-batch."""
import torch
from torch.optim.lr_scheduler import CosineAnnealingWarmRestarts


class Trainer:
    def __init__(self, net, cfg):
        self.net = net
        self.cfg = cfg
        self.optimizer = torch.optim.SGD(net.parameters(), lr=cfg.lr, momentum=0.9)
        self.scheduler = CosineAnnealingWarmRestarts(self.optimizer, T_0=10)

    def train_epoch(self, loader):
        self.net.train()
        for i, (images, targets) in enumerate(loader):
            loss = torch.nn.functional.cross_entropy(self.net(images), targets)
            (loss / self.cfg.accum).backward()
            self.scheduler.step()  # expect: SF418
            if (i + 1) % self.cfg.accum == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
