"""Trainer keeping per-sample loss history as Python floats (.item()) for curriculum weighting: no tensors are held."""
import torch
import torch.nn.functional as F


class CurriculumTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.sample_loss = {}

    def train_step(self, ids, x, y):
        logits = self.model(x)
        per_sample = F.cross_entropy(logits, y, reduction="none")
        loss = per_sample.mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        for sid, l in zip(ids.tolist(), per_sample.detach()):
            self.sample_loss[sid] = l.item()
        return loss.item()
