"""A contrastive recommender that drops embeddings with `training=True` only for augmented views the caller asks for."""
import torch.nn as nn
import torch.nn.functional as F


class Recommender(nn.Module):
    def __init__(self, users, items, dim, p=0.1):
        super().__init__()
        self.user = nn.Embedding(users, dim)
        self.item = nn.Embedding(items, dim)
        self.p = p

    def forward(self, augment=False):
        u, i = self.user.weight, self.item.weight
        if augment and self.p > 0:
            u = F.dropout(u, p=self.p, training=True)
            i = F.dropout(i, p=self.p, training=True)
        return u, i
