"""Negative bank kept in a collections.deque(maxlen=...): old batches fall out automatically (bounded)."""
from collections import deque

import torch
import torch.nn.functional as F


class QueueTrainer:
    def __init__(self, encoder, optimizer, max_batches=16):
        self.encoder = encoder
        self.optimizer = optimizer
        self.bank = deque(maxlen=max_batches)

    def step(self, x1, x2):
        z1 = F.normalize(self.encoder(x1), dim=1)
        z2 = F.normalize(self.encoder(x2), dim=1)
        negs = torch.cat([z2] + list(self.bank))
        loss = F.cross_entropy(z1 @ negs.T / 0.1, torch.arange(len(z1), device=z1.device))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.bank.append(z2.detach())
        return loss.item()
