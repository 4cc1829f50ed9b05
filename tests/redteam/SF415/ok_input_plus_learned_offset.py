"""The batch plus a learned positional parameter: the sum requires grad (not shown to lack it)."""
import torch
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader


class Net(torch.nn.Module):
    def __init__(self, body):
        super().__init__()
        self.pos = torch.nn.Parameter(torch.zeros(1, 16, 64))
        self.body = body

    def fit(self, dataset):
        for x in DataLoader(dataset):
            h = x + self.pos
            checkpoint(self.body, h).mean().backward()
