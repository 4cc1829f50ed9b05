"""Mined (electric-load forecasting service): windows the series, shuffles them in a DataLoader, trains an LSTM from the project's model module; no seed anywhere."""
import numpy as np
import torch
from torch import nn

from src.model import SeriesLSTM


def make_windows(series, seq_len, horizon):
    xs, ys = [], []
    for i in range(len(series) - seq_len - horizon):
        xs.append(series[i:i + seq_len])
        ys.append(series[i + seq_len:i + seq_len + horizon])
    return torch.FloatTensor(np.array(xs)), torch.FloatTensor(np.array(ys))


def train():
    x, y = make_windows(load_series(), 48, 24)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=32, shuffle=True)
    model = SeriesLSTM(horizon=24)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(10):
        for bx, by in loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(bx), by)
            loss.backward()
            optimizer.step()
    torch.save(model.state_dict(), "models/lstm.pt")


if __name__ == "__main__":  # expect: SF420
    train()
