"""Mined shape: a projected adaptive-softmax head with no clusters computes the NLL as `-F.log_softmax(logit, dim=-1).gather(1, target.unsqueeze(1))` (bad)."""
import torch.nn.functional as F
from torch import nn


class ProjectedSoftmaxHead(nn.Module):
    def __init__(self, d_model, vocab, n_clusters=0):
        super().__init__()
        self.proj = nn.Linear(d_model, vocab)
        self.n_clusters = n_clusters

    def forward(self, hidden, target):
        hidden = hidden.view(-1, hidden.size(-1))
        logit = self.proj(hidden)
        if self.n_clusters == 0:
            nll = -F.log_softmax(logit, dim=-1).gather(1, target.unsqueeze(1)).squeeze(1)  # expect: SF104
            return nll
        raise NotImplementedError("clustered path")
