"""Mined shape: a trainer class's `_train_epoch` method moves each batch to the device, computes
`self.criterion(...)`, adds the loss tensor to the epoch sum *before* backward, and returns the averaged sum (bad)."""
import torch.nn as nn


class Trainer:
    def __init__(self, model, train_dataloader, device):
        self.model = model
        self.train_dataloader = train_dataloader
        self.device = device
        self.criterion = nn.CrossEntropyLoss()

    def _train_epoch(self, optimizer):
        self.model.train()
        train_loss, train_metric = 0, 0
        for x, y in self.train_dataloader:
            x, y = x.to(self.device), y.to(self.device)
            logits = self.model(x)
            loss = self.criterion(logits, y)
            train_loss += loss  # expect: SF103
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        train_loss /= len(self.train_dataloader)
        return train_loss, train_metric
