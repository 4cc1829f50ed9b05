"""Mined (speech model adapter loader): the file's keys are compared with the adapter's own parameter names and any
missing or unexpected one raises; only then is the dict loaded loosely (the rest of the model is not in the file)."""
import torch
import torch.nn as nn


class SpeechModel(nn.Module):
    def __init__(self, width, vocab):
        super().__init__()
        self.encoder = nn.Linear(width, width)
        self.adapter = nn.Linear(width, width)
        self.lm_head = nn.Linear(width, vocab)

    def load_adapter(self, path):
        weights = torch.load(path, map_location="cpu")
        expected = {f"adapter.{name}": p for name, p in self.adapter.named_parameters()}
        unexpected = set(weights.keys()) - set(expected.keys())
        missing = set(expected.keys()) - set(weights.keys())
        if unexpected:
            raise ValueError(f"unexpected adapter keys: {sorted(unexpected)}")
        elif missing:
            raise ValueError(f"missing adapter keys: {sorted(missing)}")
        weights = {k: v.to(expected[k]) for k, v in weights.items()}
        self.load_state_dict(weights, strict=False)
