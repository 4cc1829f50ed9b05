"""The model class, an nn.Module, in its own file."""
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 16)
        self.out = nn.Linear(16, 5)
