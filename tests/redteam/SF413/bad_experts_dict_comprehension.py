"""Experts kept in a dict comprehension keyed by task name."""
import torch.nn as nn


class MultiExpert(nn.Module):
    def __init__(self, tasks, d):
        super().__init__()
        self.experts = {task: nn.Sequential(nn.Linear(d, d), nn.GELU()) for task in tasks}  # expect: SF413

    def forward(self, x, task):
        return self.experts[task](x)
