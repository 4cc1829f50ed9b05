"""Mined shape (cross-file in the original): a model wrapper's __init__ switches anomaly detection on; its loss_fn is what the trainer (another file) backpropagates (bad)."""
import torch
import torch.nn as nn


class MultiHeadClassifier(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.model = backbone
        self.criterion = nn.CrossEntropyLoss()
        torch.autograd.set_detect_anomaly(True)  # expect: SF203

    def forward(self, x):
        return self.model(x)

    def loss_fn(self, logits, *labels):
        return sum(self.criterion(logit, label) for logit, label in zip(logits, labels))
