"""Moves to the CPU are not host-to-device copies."""
import torch
import torch.nn as nn


class Stats(nn.Module):
    def forward(self, x):
        hist = torch.zeros(10).to("cpu")
        return x, hist.cpu()
