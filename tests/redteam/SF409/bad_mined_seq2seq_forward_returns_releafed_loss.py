"""Mined (attention seq2seq module): forward sums per-step cross entropies and returns `torch.tensor(loss, requires_grad=True)`."""
import torch
import torch.nn.functional as F
from torch import nn


class Seq2SeqLoss(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.cell = nn.LSTMCell(hidden, hidden)
        self.proj = nn.Linear(hidden, vocab)

    def forward(self, src, tgt):
        h = torch.zeros(src.size(1), self.cell.hidden_size)
        c = torch.zeros_like(h)
        loss = 0
        for prev, nxt in zip(tgt[:-1], tgt[1:]):
            h, c = self.cell(self.emb(prev), (h, c))
            loss += F.cross_entropy(self.proj(h), nxt, ignore_index=0)
        return torch.tensor(loss, requires_grad=True).unsqueeze(0)  # expect: SF409
