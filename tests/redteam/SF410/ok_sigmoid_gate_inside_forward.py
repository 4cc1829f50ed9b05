"""A sigmoid gate inside the model; the returned value is a linear layer's output (correct with BCEWithLogits)."""
import torch
import torch.nn as nn


class GatedHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(16, 16)
        self.out = nn.Linear(16, 1)

    def forward(self, h):
        g = torch.sigmoid(self.gate(h))
        return self.out(h * g)


model = GatedHead()
loss = nn.BCEWithLogitsLoss()(model(h), y)
