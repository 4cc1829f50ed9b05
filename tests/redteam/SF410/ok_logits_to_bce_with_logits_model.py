"""A same-file model returning its linear layer's output, trained with `BCEWithLogitsLoss` (correct)."""
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 5)

    def forward(self, x):
        return self.fc(x)


model = Head()
crit = nn.BCEWithLogitsLoss()
for x, y in loader:
    loss = crit(model(x), y.float())
    loss.backward()
