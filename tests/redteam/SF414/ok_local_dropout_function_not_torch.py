"""A project's own `dropout` function (not torch's) inside forward."""
import torch.nn as nn


def dropout(x, p):
    return x * (1 - p)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(dropout(x, 0.1))
