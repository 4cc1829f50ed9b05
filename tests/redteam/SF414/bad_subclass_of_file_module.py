"""A classifier deriving from a base module class of the same file, with functional dropout in its forward."""
import torch.nn as nn
import torch.nn.functional as F


class BaseModel(nn.Module):
    def num_parameters(self):
        return sum(p.numel() for p in self.parameters())


class TextClassifier(BaseModel):
    def __init__(self, vocab, dim, classes):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim)
        self.fc = nn.Linear(dim, classes)

    def forward(self, tokens, offsets):
        return self.fc(F.dropout(self.emb(tokens, offsets), 0.3))  # expect: SF414
