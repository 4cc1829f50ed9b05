"""State passed by keyword (`hx=hx`) and re-bound from the result (bad)."""
import torch.nn.functional as F


def train(rnn, loader, opt, hx):
    for x, y in loader:
        out, hx = rnn(x, hx=hx)  # expect: SF108
        loss = F.cross_entropy(out[:, -1], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
