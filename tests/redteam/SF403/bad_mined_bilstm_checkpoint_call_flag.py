"""Mined (ECG BiLSTM with attention): a call-time `use_checkpointing` flag checkpoints the bidirectional LSTM."""
from torch import nn
from torch.utils.checkpoint import checkpoint


class EcgEncoder(nn.Module):
    def __init__(self, channels=32, hidden=64):
        super().__init__()
        self.lstm = nn.LSTM(channels, hidden, batch_first=True, bidirectional=True)
        self.score = nn.Linear(2 * hidden, 1)

    def forward(self, x, use_checkpointing=False):
        x = x.transpose(1, 2)
        if use_checkpointing:
            seq, _ = checkpoint(self.lstm, x, use_reentrant=False)  # expect: SF403
        else:
            seq, _ = self.lstm(x)
        weights = self.score(seq).softmax(dim=1)
        return (weights * seq).sum(dim=1)
