"""Mined shape: a place-recognition trainer's per-batch method backpropagates, steps its optimizer and then empties the cache "to keep sparse tensors small" (bad)."""
import torch


class IncrementalTrainer:
    def __init__(self, model, optimizer, criterion):
        self.model = model
        self.optimizer = optimizer
        self.criterion = criterion
        self.meter = []

    def train_batch(self, batch, labels):
        self.optimizer.zero_grad()
        embeddings = self.model(batch)
        loss_total = self.criterion(embeddings, labels)
        loss_total.backward()
        self.optimizer.step()
        torch.cuda.empty_cache()  # expect: SF201
        self.meter.append(loss_total.item())

    def train_epoch(self, loader):
        for batch, labels in loader:
            self.train_batch(batch, labels)
