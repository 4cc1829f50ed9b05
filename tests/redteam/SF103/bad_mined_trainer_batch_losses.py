"""Mined shape: a distributed trainer's `_run_batch` appends the cross-entropy tensor to `self.batch_losses`, a list on the trainer that outlives the step (bad)."""
import torch.nn.functional as F


class SnapshotTrainer:
    def __init__(self, model, optimizer, loader):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.batch_losses = []

    def _run_batch(self, inputs, labels):
        self.optimizer.zero_grad()
        logits = self.model(inputs)
        loss = F.cross_entropy(logits, labels)
        self.batch_losses.append(loss)  # expect: SF103
        loss.backward()
        self.optimizer.step()

    def run_epoch(self):
        for inputs, labels in self.loader:
            self._run_batch(inputs, labels)
