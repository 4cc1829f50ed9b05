"""GNN layers that apply functional dropout only under `if self.training` (and-ed, elif, conditional expression)."""
import torch.nn as nn
import torch.nn.functional as F


class Layer(nn.Module):
    def __init__(self, p=0.5, sparse=False):
        super().__init__()
        self.p = p
        self.sparse = sparse
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        if self.sparse and self.training:
            x = x.coalesce()
        elif self.training:
            x = F.dropout(x, self.p)
        if self.training and self.p > 0:
            x = F.dropout(x, p=self.p, training=True)
        x = F.dropout(x, self.p) if self.training else x
        return self.lin(x)
