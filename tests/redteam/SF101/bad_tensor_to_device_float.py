"""Reward-model regression: the preference scores become a tensor that requires grad, then a device move and a cast in the same expression; only the MSE reference (bad)."""
import torch
import torch.nn.functional as F


class ScoreTrainer:
    def __init__(self, model, optimizer, device):
        self.model = model
        self.optimizer = optimizer
        self.device = device

    def update(self, batch):
        tokens, scores = batch
        reference = torch.tensor(scores, requires_grad=True).to(self.device).float()  # expect: SF101
        predicted = self.model(tokens.to(self.device)).squeeze(-1)
        loss = F.mse_loss(predicted, reference)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
