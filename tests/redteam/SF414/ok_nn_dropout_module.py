"""`nn.Dropout` layers follow `model.eval()`."""
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(self.drop(x))
