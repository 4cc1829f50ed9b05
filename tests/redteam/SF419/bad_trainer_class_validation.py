"""A trainer class: train_step clears after stepping, validate() switches to eval and backpropagates."""
import torch


class Trainer:
    def __init__(self, model, optimizer, criterion):
        self.model, self.optimizer, self.criterion = model, optimizer, criterion

    def train_step(self, x, y):
        loss = self.criterion(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.item()

    def validate(self, loader):
        self.model.eval()
        losses = []
        for x, y in loader:
            loss = self.criterion(self.model(x), y)
            loss.backward()  # expect: SF419
            losses.append(loss.item())
        self.model.train()
        return sum(losses) / len(losses)
