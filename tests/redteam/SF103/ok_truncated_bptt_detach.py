"""Truncated BPTT: the loss is summed over a window and backpropagated, the state detached."""
import torch.nn.functional as F


def train(rnn, head, stream, opt, window):
    hidden = None
    chunk_loss = 0.0
    for t, (x, y) in enumerate(stream):
        out, hidden = rnn(x, hidden)
        chunk_loss = chunk_loss + F.cross_entropy(head(out), y)
        if (t + 1) % window == 0:
            opt.zero_grad()
            chunk_loss.backward()
            opt.step()
            chunk_loss = 0.0
            hidden = hidden.detach()
