"""Near miss: the same loop logs the likelihood as a Python number (`.item()`), and the validation sum runs under
no_grad (legitimate)."""
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


def fit(model, loader, val_loader, iterations, log, lr=1e-2):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for it in range(iterations):
        train_loss = 0.0
        for batch in loader:
            optimizer.zero_grad()
            loss = model.neg_log_likelihood(batch)
            loss.backward()
            optimizer.step()
            train_loss += loss.item()
        val_loss = 0
        with torch.no_grad():
            for batch in val_loader:
                val_loss += model.neg_log_likelihood(batch)
        log({"iteration": it, "train_loss": train_loss, "val_loss": float(val_loss)})
