"""Stacked residual LSTM layers, each checkpointed through `layer.__call__`, states kept per layer."""
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class ResidualLSTM(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.lstm = nn.LSTM(d, d, batch_first=True)

    def forward(self, x, hc=None):
        out, hc = self.lstm(self.norm(x), hc)
        return x + out, hc


class Encoder(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.layers = nn.ModuleList([ResidualLSTM(d) for _ in range(n)])

    def forward(self, x, states):
        new_states = []
        for layer, hc in zip(self.layers, states):
            x, hc = checkpoint(layer.__call__, x, hc, use_reentrant=False)  # expect: SF403
            new_states.append(hc)
        return x, new_states
