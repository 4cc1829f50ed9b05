"""Mined (1-D CNN feature extractor): module-level criterion, a training function whose loss compares the output with itself ("autoencoder: input is output")."""
from torch import nn, optim


class Extractor(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 8, 3, padding=1)

    def forward(self, x):
        return self.conv(x)


extractor = Extractor()
mse = nn.MSELoss()
opt = optim.Adam(extractor.parameters(), lr=0.001)


def train_extractor(loader, num_epochs):
    for _ in range(num_epochs):
        extractor.train()
        for signals, _ in loader:
            opt.zero_grad()
            codes = extractor(signals)
            loss = mse(codes, codes)  # expect: SF401
            loss.backward()
            opt.step()
