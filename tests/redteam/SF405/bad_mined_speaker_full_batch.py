"""Mined (speaker identification script): full-batch Adam loop, CrossEntropyLoss built inline, clear between backward and step."""
import torch
from torch import nn, optim

feats = torch.randn(50, 1, 20, 40)
speakers = torch.randint(0, 5, (50,))
clf = nn.Sequential(nn.Flatten(), nn.Linear(800, 5))
adam = optim.Adam(clf.parameters(), lr=0.001)

for it in range(1000):
    scores = clf.forward(feats)
    loss = nn.CrossEntropyLoss()(scores, speakers)
    loss.backward()
    adam.zero_grad()  # expect: SF405
    adam.step()
