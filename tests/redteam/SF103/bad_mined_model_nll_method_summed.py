"""Mined shape: a mixture model exposes a negative-log-likelihood method; the training loop sums its value per batch
(`train_loss += loss`) while backpropagating a different objective, and logs the sum per iteration (bad: every
batch's graph through the likelihood stays alive until the epoch ends)."""
import torch
import torch.nn as nn


class MixtureDensity(nn.Module):
    def __init__(self, n_components, dim):
        super().__init__()
        self.means = nn.Parameter(torch.randn(n_components, dim))
        self.log_weights = nn.Parameter(torch.zeros(n_components))

    def neg_log_likelihood(self, x):
        log_prob = -0.5 * ((x[:, None, :] - self.means) ** 2).sum(-1) + self.log_weights.log_softmax(0)
        return -torch.logsumexp(log_prob, dim=1).mean()

    def forward(self, x):
        return self.neg_log_likelihood(x) + 1e-3 * self.means.pow(2).sum()


def fit(model, loader, iterations, log, lr=1e-2):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for it in range(iterations):
        train_loss = 0
        count = 0
        for batch in loader:
            optimizer.zero_grad()
            loss = model.neg_log_likelihood(batch)
            objective = model(batch)
            count += 1
            train_loss += loss  # expect: SF103
            objective.backward()
            optimizer.step()
        log({"iteration": it, "train_loss": train_loss / count})
