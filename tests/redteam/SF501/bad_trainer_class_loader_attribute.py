"""Trainer class: DDP model and a shuffling loader held on self, trained on in another method."""
import torch
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader


class DistributedTrainer:
    def __init__(self, model, dataset, rank, cfg):
        torch.distributed.init_process_group("nccl", rank=rank, world_size=cfg.world_size)
        self.rank = rank
        self.model = DistributedDataParallel(model.to(rank), device_ids=[rank])
        self.train_loader = DataLoader(dataset, batch_size=cfg.batch_size, shuffle=True)  # expect: SF501
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.lr)

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(self.model(source), targets)
        loss.backward()
        self.optimizer.step()

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            for source, targets in self.train_loader:
                self.model(source).sum().backward()
