"""A GRU-D style model whose init_hidden, run by forward, wraps host zeros moved to the GPU in a Variable."""
import torch
import torch.nn as nn
from torch.autograd import Variable


class Recurrent(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.hidden_size = hidden
        self.cell = nn.GRUCell(hidden, hidden)

    def init_hidden(self, batch_size):
        return Variable(torch.zeros(batch_size, self.hidden_size).cuda())  # expect: SF205

    def forward(self, seq):
        h = self.init_hidden(seq.size(0))
        for t in range(seq.size(1)):
            h = self.cell(seq[:, t], h)
        return h
