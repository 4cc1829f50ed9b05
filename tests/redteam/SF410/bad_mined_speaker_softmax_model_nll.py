"""Mined (speaker identification; the model class lives in another module there): forward ends in softmax, NLLLoss gets its output."""
import torch
import torch.nn.functional as F
from torch import nn, optim


class SpeakerNet(nn.Module):
    def __init__(self, n_in, n_speakers):
        super().__init__()
        self.enc = nn.LSTM(n_in, 64, 2, batch_first=True)
        self.fc = nn.Linear(128, n_speakers)

    def forward(self, x):
        _, (h, _) = self.enc(x)
        z = torch.cat(tuple(h), dim=-1)
        return F.softmax(self.fc(z), dim=-1)


frames = torch.randn(16, 30, 13)
labels = torch.randint(0, 4, (16,))
net = SpeakerNet(13, 4)
adam = optim.Adam(net.parameters(), lr=0.001)
for it in range(100):
    probs = net.forward(frames)
    loss = torch.nn.NLLLoss()(probs, labels)  # expect: SF410
    adam.zero_grad()
    loss.backward()
    adam.step()
