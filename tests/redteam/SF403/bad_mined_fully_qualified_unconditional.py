"""Mined (token sequence model): `torch.utils.checkpoint.checkpoint(self.lstm, ...)` spelled in full, on every forward."""
import torch
import torch.utils.checkpoint
from torch import nn


class TokenTagger(nn.Module):
    def __init__(self, vocab, dim=64, n_tags=5):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim, batch_first=True)
        self.fc = nn.Linear(dim, n_tags)

    def forward(self, tokens):
        emb = self.embedding(tokens).to(torch.float32)
        seq, _ = torch.utils.checkpoint.checkpoint(self.lstm, emb, use_reentrant=False)  # expect: SF403
        return self.fc(seq)
