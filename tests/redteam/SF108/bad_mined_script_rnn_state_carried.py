"""Mined shape: a module-level script carries the RNN state `h` from one step to the next (`out, h = rnn(x0, h)`) and backpropagates every step without detaching it (bad)."""
import torch
import torch.nn as nn

rnn = nn.RNN(input_size=1, hidden_size=2, num_layers=1)
head = nn.Linear(2, 1)
h = torch.randn(1, 1, 2)
x0 = 7 * torch.ones(1).view(1, 1, 1)
optimizer = torch.optim.Adam(list(rnn.parameters()) + list(head.parameters()), lr=0.01)
for i in range(2):
    optimizer.zero_grad()
    out, h = rnn(x0, h)  # expect: SF108
    out = head(out.view(-1, 2))
    out.backward()
    optimizer.step()
