"""Mined (many-to-one LSTM regressor): `from torch.utils.checkpoint import checkpoint` imported inside forward, around `self.lstm`."""
from torch import nn


class LastStepRegressor(nn.Module):
    def __init__(self, n_in, hidden=32, use_checkpointing=True):
        super().__init__()
        self.use_checkpointing = use_checkpointing
        self.lstm = nn.LSTM(n_in, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, 1)

    def forward(self, x):
        if self.use_checkpointing and self.training:
            from torch.utils.checkpoint import checkpoint

            seq, _ = checkpoint(self.lstm, x, use_reentrant=False)  # expect: SF403
        else:
            seq, _ = self.lstm(x)
        return self.fc(seq[:, -1, :])
