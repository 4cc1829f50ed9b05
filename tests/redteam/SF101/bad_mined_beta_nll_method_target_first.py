"""Mined shape: a reward-predictor method collects preference ratings into a list, wraps them with
torch.tensor(..., requires_grad=True).to(device) and passes them as the *first* argument of a hand-written
Beta negative-log-likelihood method of the same class (bad: the ratings are the observations, never
differentiated)."""
import torch
import torch.nn as nn


class RewardPredictor(nn.Module):
    def __init__(self, net, kappa=10.0, device="cpu"):
        super().__init__()
        self.net = net
        self.kappa = kappa
        self.device = device
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-4)

    def _log_likelihood(self, ratings, p):
        ratings = ratings.clamp(1e-6, 1 - 1e-6)
        p = p.clamp(1e-6, 1 - 1e-6)
        a, b = self.kappa * p, self.kappa * (1 - p)
        return torch.lgamma(a + b) - torch.lgamma(a) - torch.lgamma(b) + (a - 1) * torch.log(ratings) + (b - 1) * torch.log(1 - ratings)

    def _nll(self, ratings, p):
        return -self._log_likelihood(ratings, p).mean()

    def train_step(self, pairs):
        ratings, probabilities = [], []
        for first, second, rating in pairs:
            ratings.append(rating)
            probabilities.append(torch.sigmoid(self.net(second).sum() - self.net(first).sum()))
        ratings = torch.tensor(ratings, requires_grad=True).to(self.device)  # expect: SF101
        probabilities = torch.stack(probabilities).to(self.device)
        loss = self._nll(ratings, probabilities)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
