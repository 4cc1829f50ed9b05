"""An LSTM over a whole sequence from a zero state; only the outputs are kept."""
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Hedger(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.pre = nn.Linear(d_in, d_hidden)
        self.lstm = nn.LSTM(d_hidden, d_hidden, num_layers=3, batch_first=True)
        self.head = nn.Linear(d_hidden, d_out)

    def forward(self, feats):
        h = self.pre(feats)
        out, _ = checkpoint(self.lstm, h, use_reentrant=False)
        return self.head(out)
