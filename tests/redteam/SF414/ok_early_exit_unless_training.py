"""A feature-dropout helper that returns early unless training."""
import torch
import torch.nn as nn


class PoseNet(nn.Module):
    def __init__(self, p=0.1):
        super().__init__()
        self.p = p
        self.fc = nn.Linear(6, 6)

    def _feature_dropout(self, feature):
        if not self.training:
            return feature
        return torch.nn.functional.dropout(feature, p=self.p, training=True)

    def forward(self, x):
        return self.fc(self._feature_dropout(x))
