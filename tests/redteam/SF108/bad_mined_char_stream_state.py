"""Mined shape: a character-level model steps through the text one character at a time, `out, h = model(x, h)`, with a backward and step per character and the state reset only per epoch (bad)."""
import torch
from torch import nn


def fit(model, ids, vocab, epochs=10):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        total = 0.0
        h = None
        for i in range(len(ids) - 1):
            x = torch.tensor([[ids[i]]])
            y = torch.tensor([ids[i + 1]])
            out, h = model(x, h)  # expect: SF108
            loss = criterion(out.view(-1, vocab), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        print(epoch, total)
