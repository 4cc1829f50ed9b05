"""The module's mode is passed (keyword and positional)."""
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        x = F.dropout(x, 0.5, training=self.training)
        return self.fc(F.dropout(x, 0.5, self.training))
