"""Pretrained vectors loaded with freeze=False: the embedding trains and its output requires grad."""
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Enc(nn.Module):
    def __init__(self, vectors, rnn):
        super().__init__()
        self.words = nn.Embedding.from_pretrained(vectors, freeze=False)
        self.rnn = rnn

    def forward(self, ids):
        return checkpoint(self.rnn, self.words(ids))
