"""A replay memory of raw batches as the DataLoader yields them (host memory), split by another module's helper."""
import torch
from torch.utils.data import DataLoader

from .batches import split_batch


class ReplayTrainer:
    def __init__(self, model, device):
        self.model = model
        self.device = device
        self.memory = {}

    def fit_epoch(self, dataset, optimizer):
        for batch in DataLoader(dataset, batch_size=16, shuffle=True):
            pixels, ids = split_batch(batch)
            self.memory[int(ids[0])] = pixels.detach().clone()
            loss = self.model(pixels.to(self.device)).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
