"""The state is detached after each update (correct)."""
import torch


def fit(cell, head, xs, ys, opt):
    h = torch.zeros(1, 16)
    for x, y in zip(xs, ys):
        h = cell(x, h)
        loss = (head(h) - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        h = h.detach()
