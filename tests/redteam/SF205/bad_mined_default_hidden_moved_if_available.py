"""Mined shape: a word LM's forward builds a zero hidden state when none is passed, then moves it under `if torch.cuda.is_available():` on every call (bad)."""
import torch
import torch.nn as nn
from torch.autograd import Variable


class WordLM(nn.Module):
    def __init__(self, vocab, embed, hidden_size, num_layers):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.embed = nn.Embedding(vocab, embed)
        self.rnn = nn.GRU(embed, hidden_size, num_layers)
        self.out = nn.Linear(hidden_size, vocab)

    def forward(self, x, hidden=None):
        seq_len, batch_size = x.size()
        if hidden is None:
            hidden = Variable(torch.zeros(self.num_layers, batch_size, self.hidden_size))
            if torch.cuda.is_available():
                hidden = hidden.cuda()  # expect: SF205
        net, hidden = self.rnn(self.embed(x), hidden)
        return self.out(net), hidden
