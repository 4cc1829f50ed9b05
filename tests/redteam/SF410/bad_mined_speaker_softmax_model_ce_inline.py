"""Mined (speaker identification, CNN version; model class in another module there): forward ends in softmax, `nn.CrossEntropyLoss()(y, Y)` built inline."""
import torch
import torch.nn.functional as F
from torch import nn, optim


class ConvSpeaker(nn.Module):
    def __init__(self, n_speakers):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3)
        self.out = nn.Linear(8 * 18 * 38, n_speakers)

    def forward(self, x):
        x = F.relu(self.conv(x))
        x = F.relu(self.out(x.flatten(1)))
        return F.softmax(x)


feats = torch.randn(10, 1, 20, 40)
who = torch.randint(0, 5, (10,))
clf = ConvSpeaker(5)
adam = optim.Adam(clf.parameters(), lr=0.001)
for it in range(200):
    y = clf.forward(feats)
    loss = torch.nn.CrossEntropyLoss()(y, who)  # expect: SF410
    adam.zero_grad()
    loss.backward()
    adam.step()
