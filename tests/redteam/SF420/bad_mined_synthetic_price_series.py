"""Mined (trading demo): synthetic prices from numpy's global RNG, an LSTM trained on them full-batch; no seed."""
import numpy as np
import torch
from torch import nn

from ..ml.models import PriceLSTM


def synthetic_prices(n):
    t = np.linspace(0, 100, n)
    return np.sin(t) * 10 + 100 + np.random.normal(0, 1, n)


def train():
    prices = synthetic_prices(2000)
    x = torch.from_numpy(prices[:-1]).float().view(-1, 1, 1)
    y = (torch.from_numpy(np.diff(prices)) > 0).float().view(-1, 1)
    model = PriceLSTM(input_size=1, hidden_size=64)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(10):
        opt.zero_grad()
        loss = nn.BCELoss()(model(x), y)
        loss.backward()
        opt.step()


if __name__ == "__main__":  # expect: SF420
    train()
