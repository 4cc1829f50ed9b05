"""Mined (LSTM forecaster): `checkpoint(self.lstm, x, use_reentrant=False)` when a flag is set and training, unpacking `(h_n, c_n)`."""
from torch import nn
from torch.utils.checkpoint import checkpoint


class Forecaster(nn.Module):
    def __init__(self, n_in, hidden, n_out, use_ckpt=True):
        super().__init__()
        self.use_ckpt = use_ckpt
        self.lstm = nn.LSTM(n_in, hidden, batch_first=True)
        self.head = nn.Linear(hidden, n_out)

    def forward(self, x):
        if self.use_ckpt and self.training:
            seq, (h_n, c_n) = checkpoint(self.lstm, x, use_reentrant=False)  # expect: SF403
        else:
            seq, (h_n, c_n) = self.lstm(x)
        return self.head(seq[:, -1, :])
