"""A hypergraph network (dropout rate kept on self) applying functional dropout to the hidden features."""
import torch.nn as nn
import torch.nn.functional as F


class HyperConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(nn.init.xavier_uniform_(nn.Linear(d_in, d_out).weight.T.clone()))

    def forward(self, x, G):
        return G @ (x @ self.weight)


class HGNN(nn.Module):
    def __init__(self, d_in, hidden, classes, dropout=0.5):
        super().__init__()
        self.dropout = dropout
        self.hgc1 = HyperConv(d_in, hidden)
        self.hgc2 = HyperConv(hidden, classes)

    def forward(self, x, G):
        x = F.relu(self.hgc1(x, G))
        x = F.dropout(x, self.dropout)  # expect: SF414
        return self.hgc2(x, G)
