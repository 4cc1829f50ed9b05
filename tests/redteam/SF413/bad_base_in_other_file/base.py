"""A project base model, an nn.Module, in its own file."""
import torch.nn as nn


class BaseNet(nn.Module):
    def num_params(self):
        return sum(p.numel() for p in self.parameters())
