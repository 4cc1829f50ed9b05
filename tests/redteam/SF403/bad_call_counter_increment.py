"""A checkpointed forward of a module of the file that counts its own calls."""
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class CountedBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.fc(x).relu()


class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.block = CountedBlock(d)

    def forward(self, x):
        return checkpoint(self.block, x, use_reentrant=False)  # expect: SF403
