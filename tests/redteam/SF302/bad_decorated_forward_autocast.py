"""Decorated forward autocast (must be reported)."""
import torch.nn as nn
from torch.cuda.amp import autocast


class Head(nn.Module):
    def __init__(self, dim, classes):
        super().__init__()
        self.fc = nn.Linear(dim, classes)

    @autocast(enabled=False)  # expect: SF302
    def forward(self, x):
        return self.fc(x.float())
