"""Mined shape: a small trainer object's per-batch method runs backward and step and adds the loss tensor to `self.running_loss`, which lives across calls (bad)."""
import torch
from torch import nn


class SequenceRegressor:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.criterion = nn.MSELoss()
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.running_loss = 0

    def fit_batch(self, window, target):
        window = torch.tensor(window).float()
        target = torch.tensor(target).float()
        self.model.zero_grad()
        pred = self.model(window)
        loss = self.criterion(pred, target)
        loss.backward()
        self.running_loss += loss  # expect: SF103
        self.opt.step()
