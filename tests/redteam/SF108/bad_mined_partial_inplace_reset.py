"""Mined shape: a language model resets only the rows of the state whose stream restarted (`h[0, j] = zeros`, in place, no detach) and feeds the state back every batch (bad)."""
import torch


def train(model, dataloader, optimizer, hidden_size, batch_size):
    h = torch.zeros(1, batch_size, hidden_size)
    for x, y, restarted in dataloader:
        for j, reset in enumerate(restarted):
            if reset:
                h[0, j] = torch.zeros(hidden_size)
        x, y = x.squeeze(), y.squeeze()
        optimizer.zero_grad()
        out, h = model(x, h)  # expect: SF108
        target = model.encoder(y)
        loss = torch.log1p(torch.exp(-(out * target).sum(-1))).mean()
        loss.backward()
        optimizer.step()
