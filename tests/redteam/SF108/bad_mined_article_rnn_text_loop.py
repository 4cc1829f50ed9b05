"""Mined shape (code block of an article): a module-level loop feeds `output, hidden = rnn(input, hidden)` back every iteration with a fresh loss, backward and step, never detaching the state (bad)."""
import torch
import torch.nn as nn
import torch.optim as optim


class TinyRecurrent(nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.i2h = nn.Linear(n_in + n_hidden, n_hidden)
        self.i2o = nn.Linear(n_in + n_hidden, n_out)

    def forward(self, x, state):
        both = torch.cat((x, state), -1)
        return self.i2o(both), torch.tanh(self.i2h(both))


net = TinyRecurrent(32, 64, 10)
optimizer = optim.Adam(net.parameters(), lr=1e-3)
state = torch.zeros(1, 64)

for step in range(100):
    x = torch.randn(1, 32)
    logits, state = net(x, state)  # expect: SF108
    loss = nn.functional.cross_entropy(logits, torch.randint(10, (1,)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
