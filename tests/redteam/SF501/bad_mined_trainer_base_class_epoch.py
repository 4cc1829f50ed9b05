"""Paraphrase of a mined DDP trainer subclass: the shuffling loader is built in __init__ and trained on by an epoch method of the base class in another file."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader

from utils.base_trainer import BaseTrainer


class DDPTrainer(BaseTrainer):
    def __init__(self, model_fn, train_set, test_set, batch_size=16, workers=2, epochs=100):
        self.model_fn = model_fn
        self.epochs = epochs
        self.train_loader = DataLoader(train_set, batch_size=batch_size, num_workers=workers, shuffle=True)  # expect: SF501
        self.test_loader = DataLoader(test_set, batch_size=batch_size, num_workers=workers, shuffle=False)

    def _setup(self, rank, world_size):
        dist.init_process_group(backend="gloo", rank=rank, world_size=world_size)
        self.model = DistributedDataParallel(self.model_fn().to(rank), device_ids=[rank])
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)

    def train(self, rank, world_size):
        self._setup(rank, world_size)
        for self.epoch in range(1, self.epochs + 1):
            self._train_one_epoch(self.train_loader)
            self._evaluate(self.test_loader)
