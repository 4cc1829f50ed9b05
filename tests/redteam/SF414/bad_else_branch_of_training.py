"""A module whose else-branch (evaluation) still drops features with the functional default."""
import torch.nn as nn
import torch.nn.functional as F


class Noisy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        if self.training:
            x = x + 0.01 * x.detach().std()
        else:
            x = F.dropout(x, 0.2)  # expect: SF414
        return self.fc(x)
