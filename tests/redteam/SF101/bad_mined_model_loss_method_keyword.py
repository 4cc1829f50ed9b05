"""Mined shape: a trainer converts each batch's regression targets with torch.tensor(...).to(device).float(),
sets `.requires_grad = True` on them, and hands them reshaped, by keyword, to a loss method of the model object
(bad: the model's loss method never differentiates its target)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RidgeRegressor(nn.Module):
    def __init__(self, n_features, reg=1e-3):
        super().__init__()
        self.linear = nn.Linear(n_features, 1)
        self.reg = reg

    def forward(self, x):
        return self.linear(x)

    def loss_fn(self, output, target, reg):
        return F.mse_loss(output, target) + reg * self.linear.weight.pow(2).sum()


class Trainer:
    def __init__(self, model, optimizer, device):
        self.model = model
        self.optimizer = optimizer
        self.device = device

    def train_epoch(self, batches):
        total = 0.0
        for features, values in batches:
            features = torch.tensor(features).to(self.device).float()
            values = torch.tensor(values).to(self.device).float()
            values.requires_grad = True  # expect: SF101
            prediction = self.model(features)
            loss = self.model.loss_fn(output=prediction, target=values.reshape(values.shape[0], 1), reg=self.model.reg)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            total += loss.item()
        return total
