"""A two-layer graph convolution network dropping features between its layers with the functional default."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GraphConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x, adj):
        return adj @ self.lin(x)


class GCN(nn.Module):
    def __init__(self, d_in, d_hidden, classes, dropout=0.5):
        super().__init__()
        self.dropout = dropout
        self.conv1 = GraphConv(d_in, d_hidden)
        self.conv2 = GraphConv(d_hidden, classes)

    def forward(self, x, adj):
        x = torch.relu(self.conv1(x, adj))
        x = F.dropout(x, self.dropout)  # expect: SF414
        return F.log_softmax(self.conv2(x, adj), dim=1)
