"""`nn.Softmax(dim=1)(logits)` constructed and applied inline, then `nn.CrossEntropyLoss()` (bad)."""
from torch import nn


def classifier_loss(logits, target):
    probs = nn.Softmax(dim=1)(logits)
    return nn.CrossEntropyLoss()(probs, target)  # expect: SF410
