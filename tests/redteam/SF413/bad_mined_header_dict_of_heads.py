"""Mined (spectrum model head bank): an empty dict filled with head modules of the file, by key."""
import torch as th
from torch import nn


class ClassHead(nn.Module):
    def __init__(self, units, classes):
        super().__init__()
        self.fc = nn.Linear(units, classes)

    def forward(self, x):
        return self.fc(x)


class SeqHead(nn.Module):
    def __init__(self, units, out):
        super().__init__()
        self.fc = nn.Linear(units, out)

    def forward(self, x):
        return self.fc(x)


class HeadBank(nn.Module):
    def __init__(self, spec, lr=1e-4):
        super().__init__()
        units = spec["in_units"]
        self.heads = {}  # expect: SF413
        if "seq" in spec:
            self.heads["seq"] = SeqHead(units, spec["seq"])
        if "charge" in spec:
            self.heads["charge"] = ClassHead(units, spec["charge"])
        self.opts = {k: th.optim.Adam(self.heads[k].parameters(), lr=lr) for k in self.heads}

    def forward(self, emb):
        return {k: head(emb) for k, head in self.heads.items()}
