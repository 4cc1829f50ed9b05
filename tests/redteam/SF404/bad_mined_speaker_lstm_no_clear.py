"""Mined (speaker identification, LSTM version): full-batch module-level loop with backward and step and no clear anywhere."""
import torch
from torch import nn, optim

seqs = torch.randn(1, 60, 13)
who = torch.randint(0, 4, (60,))
rnn_head = nn.Sequential(nn.Linear(13, 32), nn.ReLU(), nn.Linear(32, 4), nn.LogSoftmax(dim=-1))
adam = optim.Adam(rnn_head.parameters(), lr=0.001)

for it in range(1000):
    logp = rnn_head.forward(seqs[0])
    loss = nn.NLLLoss()(logp, who)
    loss.backward()
    adam.step()  # expect: SF404
