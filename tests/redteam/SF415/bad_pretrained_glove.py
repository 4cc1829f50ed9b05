"""GloVe vectors via Embedding.from_pretrained (frozen by default) into a checkpointed GRU stack."""
import torch.nn as nn
import torch.utils.checkpoint as tuc


class Tagger(nn.Module):
    def __init__(self, glove, hidden, tags):
        super().__init__()
        self.glove = nn.Embedding.from_pretrained(glove, freeze=True)
        self.gru = nn.GRU(glove.size(1), hidden, batch_first=True)
        self.out = nn.Linear(hidden, tags)

    def encode(self, e):
        return self.gru(e)[0]

    def forward(self, words):
        return self.out(tuc.checkpoint(self.encode, self.glove(words)))  # expect: SF415
