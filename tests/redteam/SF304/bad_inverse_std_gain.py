"""A gain 1 / (std + 1e-10): scale matching with a constant numerator (bad)."""
import torch


class Whitener(torch.nn.Module):
    def forward(self, x):
        gain = 1.0 / (x.std(dim=0, keepdim=True) + 1e-10)  # expect: SF304
        return (x - x.mean(dim=0, keepdim=True)) * gain
