"""Near miss: the trainer method adds `loss.detach()` to the epoch sum (no history kept, legitimate)."""
import torch.nn as nn


class Trainer:
    def __init__(self, model, train_dataloader, device):
        self.model = model
        self.train_dataloader = train_dataloader
        self.device = device
        self.criterion = nn.CrossEntropyLoss()

    def _train_epoch(self, optimizer):
        self.model.train()
        train_loss = 0
        for x, y in self.train_dataloader:
            x, y = x.to(self.device), y.to(self.device)
            loss = self.criterion(self.model(x), y)
            train_loss += loss.detach()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return train_loss / len(self.train_dataloader)
