"""The network: embedding and GRU, initialised at random when constructed."""
from torch import nn


class Tagger(nn.Module):
    def __init__(self, vocab, tags):
        super().__init__()
        self.emb = nn.Embedding(vocab, 64)
        self.rnn = nn.GRU(64, 64, batch_first=True)
        self.out = nn.Linear(64, tags)

    def forward(self, x):
        h, _ = self.rnn(self.emb(x))
        return self.out(h)
