"""The table is created on the device by the helper; the `.to` in forward is a no-op, not a copy."""
import torch.nn as nn

from enc.tables import ramp


class Net(nn.Module):
    def __init__(self, length, device):
        super().__init__()
        self.fc = nn.Linear(length, 1)
        self.ramp = ramp(length, device)

    def forward(self, x):
        return self.fc(x * self.ramp.to(x.device))
