"""Trainer keeps a memory tensor on self and feeds it back each step (bad)."""
import torch


class MemoryTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.memory = None

    def step(self, batch):
        logits, self.memory = self.model(batch["x"], memory=self.memory)  # expect: SF108
        loss = torch.nn.functional.cross_entropy(logits, batch["y"])
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
