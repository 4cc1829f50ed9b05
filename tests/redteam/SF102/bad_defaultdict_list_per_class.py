"""Trainer keeps every detached feature per class in a defaultdict(list) on the GPU for prototype computation, never cleared (bad)."""
from collections import defaultdict

import torch
import torch.nn.functional as F


class ProtoTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.class_feats = defaultdict(list)

    def train_step(self, x, y):
        feats, logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        for f, label in zip(feats.detach(), y.tolist()):
            self.class_feats[label].append(f)  # expect: SF102
        return loss.item()

    def prototypes(self):
        return {c: torch.stack(v).mean(0) for c, v in self.class_feats.items()}
