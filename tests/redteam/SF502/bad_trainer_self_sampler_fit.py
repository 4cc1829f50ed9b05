"""Trainer class keeps the sampler and loader on self; fit loops epochs and calls a step method."""
import torch
from torch.utils import data


class Trainer:
    def __init__(self, model, dataset, cfg):
        self.model = torch.nn.parallel.DistributedDataParallel(model)
        self.train_sampler = data.distributed.DistributedSampler(dataset, seed=cfg.seed)  # expect: SF502
        self.train_loader = data.DataLoader(dataset, batch_size=cfg.bs, sampler=self.train_sampler, drop_last=True)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr)

    def step(self, batch):
        self.opt.zero_grad()
        self.model(batch).mean().backward()
        self.opt.step()

    def fit(self, epochs):
        for epoch in range(epochs):
            for batch in self.train_loader:
                self.step(batch)
