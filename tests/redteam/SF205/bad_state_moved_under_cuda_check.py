"""A zero state built in host memory and moved by the next statement under a CUDA check, on every forward (bad)."""
import torch
import torch.nn as nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 8)

    def forward(self, x):
        hidden = torch.zeros(1, x.size(1), 8)
        if torch.cuda.is_available():
            hidden = hidden.cuda()  # expect: SF205
        return self.rnn(x, hidden)
