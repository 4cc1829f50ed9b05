"""nn.LogSoftmax module built and called inline, then gathered (bad)."""
from torch import nn


def classify_tokens(logits, targets):
    return nn.LogSoftmax(dim=-1)(logits).gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # expect: SF104
