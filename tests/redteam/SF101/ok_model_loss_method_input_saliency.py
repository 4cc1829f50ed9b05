"""Near miss: the trainer marks the *features* as requiring grad and reads their gradient after backward for a
feature-importance estimate; the target reaches the model's loss method untouched (legitimate)."""
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
        self.importance = None

    def train_epoch(self, batches):
        for features, values in batches:
            features = torch.tensor(features).to(self.device).float()
            values = torch.tensor(values).to(self.device).float()
            features.requires_grad = True
            prediction = self.model(features)
            loss = self.model.loss_fn(output=prediction, target=values.reshape(values.shape[0], 1), reg=self.model.reg)
            self.optimizer.zero_grad()
            loss.backward()
            self.importance = features.grad.abs().mean(0)
            self.optimizer.step()
