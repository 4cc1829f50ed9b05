"""Epsilon from a config: not known to the file (ok)."""
import torch


class Match(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.eps = config.scale_eps

    def forward(self, out, target_rms):
        rms = out.pow(2).mean(-1, keepdim=True).sqrt()
        return out * (target_rms / (rms + self.eps))
