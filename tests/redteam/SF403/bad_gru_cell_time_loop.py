"""A GRU cell unrolled by hand, each step checkpointed, the hidden state fed back."""
import torch
import torch.nn as nn
import torch.utils.checkpoint as cp


class Tracker(nn.Module):
    def __init__(self, d_in, d):
        super().__init__()
        self.cell = nn.GRUCell(d_in, d)
        self.out = nn.Linear(d, 4)

    def forward(self, x):
        h = x.new_zeros(x.shape[0], self.cell.hidden_size)
        ys = []
        for t in range(x.shape[1]):
            h = cp.checkpoint(self.cell, x[:, t], h, use_reentrant=False)  # expect: SF403
            ys.append(self.out(h))
        return torch.stack(ys, 1)
