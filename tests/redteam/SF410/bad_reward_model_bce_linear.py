"""Binary preference head: raw `nn.Linear` scores fed to `nn.BCELoss` (bad)."""
import torch
from torch import nn


class PreferenceHead(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.score = nn.Linear(hidden, 1)

    def forward(self, h):
        return self.score(h).squeeze(-1)


head = PreferenceHead(768)
bce = nn.BCELoss()


def train_pair(h_chosen, labels, opt):
    logits = head(h_chosen)
    loss = bce(logits, labels.float())  # expect: SF410
    opt.zero_grad()
    loss.backward()
    opt.step()
