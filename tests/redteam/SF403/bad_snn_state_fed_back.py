"""A spiking layer unrolled over time; each step is checkpointed and its membrane state fed back."""
from typing import NamedTuple

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class LIFState(NamedTuple):
    v: torch.Tensor
    i: torch.Tensor


class SpikingLayer(nn.Module):
    def __init__(self, n_in, n_out, tau_mem=0.9, tau_syn=0.8):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)
        self.tau_mem, self.tau_syn = tau_mem, tau_syn

    def lif_step(self, x_t, s):
        i = self.tau_syn * s.i + self.fc(x_t)
        v = self.tau_mem * s.v + i
        z = (v > 1.0).float() + v - v.detach()
        return z, LIFState(v * (1 - z), i)

    def forward(self, xs):
        s = LIFState(xs.new_zeros(xs.shape[1], self.fc.out_features), xs.new_zeros(xs.shape[1], self.fc.out_features))
        spikes = []
        for t in range(xs.shape[0]):
            z, s = checkpoint(self.lif_step, xs[t], s, use_reentrant=False)  # expect: SF403
            spikes.append(z)
        return torch.stack(spikes)
