"""A model deriving from the project's base class in another file: functional dropout without the mode."""
import torch.nn as nn
import torch.nn.functional as F

from base import BaseModel


class Tagger(BaseModel):
    def __init__(self, dim, tags):
        super().__init__()
        self.proj = nn.Linear(dim, tags)

    def forward(self, h):
        return self.proj(F.dropout(h, 0.25))  # expect: SF414
