"""A 1-D CNN classifier whose fully connected head applies functional dropout after its ReLU."""
import torch.nn as nn
import torch.nn.functional as F


class AudioNet(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.conv = nn.Conv1d(1, 16, 5)
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, classes)

    def forward(self, wave):
        x = self.pool(F.relu(self.conv(wave))).squeeze(-1)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, p=0.5)  # expect: SF414
        return self.fc2(x)
