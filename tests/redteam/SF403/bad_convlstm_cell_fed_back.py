"""A ConvLSTM cell module of the file, checkpointed per frame with (h, c) threaded through."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class ConvLSTMCell(nn.Module):
    def __init__(self, c_in, c_hid):
        super().__init__()
        self.gates = nn.Conv2d(c_in + c_hid, 4 * c_hid, 3, padding=1)

    def forward(self, x, h, c):
        i, f, o, g = self.gates(torch.cat([x, h], 1)).chunk(4, 1)
        c_next = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_next = torch.sigmoid(o) * torch.tanh(c_next)
        return h_next, c_next


class Forecaster(nn.Module):
    def __init__(self, c_in, c_hid):
        super().__init__()
        self.cell = ConvLSTMCell(c_in, c_hid)

    def forward(self, frames, h, c):
        for t in range(frames.shape[1]):
            h, c = checkpoint(self.cell, frames[:, t], h, c, use_reentrant=False)  # expect: SF403
        return h
