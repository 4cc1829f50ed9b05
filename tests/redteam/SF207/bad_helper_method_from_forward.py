"""A method forward calls moves a plain attribute table."""
import torch
import torch.nn as nn


class Tokens(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.emb = nn.Embedding(vocab, 32)
        self.penalty = torch.zeros(vocab)

    def penalize(self, logits):
        return logits - self.penalty.cuda()  # expect: SF207

    def forward(self, ids):
        return self.penalize(self.emb(ids) @ self.emb.weight.T)
