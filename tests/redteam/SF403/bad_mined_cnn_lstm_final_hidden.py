"""Mined (CNN + LSTM signal classifier): the LSTM branch is checkpointed and its final hidden state `h_n[-1]` is used as the feature."""
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class SignalNet(nn.Module):
    def __init__(self, hidden=64, n_cls=4, ckpt=True):
        super().__init__()
        self.ckpt = ckpt
        self.conv = nn.Conv1d(2, 16, 5, padding=2)
        self.lstm = nn.LSTM(2, hidden, batch_first=True)
        self.out = nn.Linear(16 + hidden, n_cls)

    def forward(self, x):
        conv_feat = self.conv(x).mean(-1)
        seq_in = x.transpose(1, 2)
        if self.ckpt and self.training:
            _, (h_n, c_n) = checkpoint(self.lstm, seq_in, use_reentrant=False)  # expect: SF403
        else:
            _, (h_n, c_n) = self.lstm(seq_in)
        return self.out(torch.cat([conv_feat, h_n[-1]], dim=1))
