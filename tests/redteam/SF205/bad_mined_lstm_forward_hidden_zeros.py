"""A seq2seq encoder whose forward starts its LSTM cell state from host zeros moved with `.cuda()`."""
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.hidden_size = hidden
        self.embed = nn.Embedding(vocab, hidden)
        self.cell = nn.LSTMCell(hidden, hidden)

    def forward(self, tokens):
        batch = tokens.size(0)
        h = torch.zeros(batch, self.hidden_size).cuda()  # expect: SF205
        c = torch.zeros(batch, self.hidden_size, device=tokens.device)
        for t in range(tokens.size(1)):
            h, c = self.cell(self.embed(tokens[:, t]), (h, c))
        return h
