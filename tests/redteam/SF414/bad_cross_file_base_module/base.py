"""A project's base model class, an nn.Module, in its own file."""
import torch.nn as nn


class BaseModel(nn.Module):
    def num_parameters(self):
        return sum(p.numel() for p in self.parameters())
