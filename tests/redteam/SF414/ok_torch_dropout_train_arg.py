"""`torch.dropout` takes its `train` flag explicitly: here the module's mode."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(torch.dropout(x, 0.3, self.training))
