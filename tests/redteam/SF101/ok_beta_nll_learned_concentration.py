"""Near miss: the reward predictor's Beta concentration is a tensor created with requires_grad=True and handed to
the optimizer (a learned parameter); the ratings are plain (legitimate)."""
import torch
import torch.nn as nn


class RewardPredictor(nn.Module):
    def __init__(self, net, device="cpu"):
        super().__init__()
        self.net = net
        self.device = device
        self.log_kappa = torch.tensor(2.0, requires_grad=True)
        self.optimizer = torch.optim.Adam(list(self.net.parameters()) + [self.log_kappa], lr=1e-4)

    def _nll(self, ratings, p):
        kappa = self.log_kappa.exp()
        ratings, p = ratings.clamp(1e-6, 1 - 1e-6), p.clamp(1e-6, 1 - 1e-6)
        a, b = kappa * p, kappa * (1 - p)
        log_prob = torch.lgamma(a + b) - torch.lgamma(a) - torch.lgamma(b) + (a - 1) * torch.log(ratings) + (b - 1) * torch.log(1 - ratings)
        return -log_prob.mean()

    def train_step(self, pairs):
        ratings = torch.tensor([rating for _, _, rating in pairs]).to(self.device)
        probabilities = torch.stack([torch.sigmoid(self.net(s).sum() - self.net(f).sum()) for f, s, _ in pairs])
        loss = self._nll(ratings, probabilities)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
