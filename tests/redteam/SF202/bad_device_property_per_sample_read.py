"""Trainer whose device is a property resolving to CUDA; each sample's loss is read to the host inside the step (bad)."""
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.per_sample = []

    @property
    def device(self):
        return torch.device("cuda", 0)

    def train_epoch(self, loader):
        for images, labels in loader:
            images, labels = images.to(self.device), labels.to(self.device)
            losses = F.cross_entropy(self.model(images), labels, reduction="none")
            for value in losses:
                self.per_sample.append(value.detach().item())  # expect: SF202
            self.optimizer.zero_grad()
            losses.mean().backward()
            self.optimizer.step()
