"""LSTM state as an (h, c) tuple variable, enumerate loop, per-batch update (bad)."""
import torch


def fit(lstm, proj, loader, opt):
    state = None
    for i, (x, y) in enumerate(loader):
        out, state = lstm(x, state)  # expect: SF108
        loss = torch.nn.functional.mse_loss(proj(out), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
