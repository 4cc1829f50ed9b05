"""Encoder and decoder layers kept in a tuple attribute, alias of torch.nn imported from torch."""
import torch


class AutoEncoder(torch.nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.parts = (torch.nn.Linear(d, h), torch.nn.Linear(h, d))  # expect: SF413

    def forward(self, x):
        enc, dec = self.parts
        return dec(enc(x).tanh())
