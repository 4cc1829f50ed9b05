"""Full BPTT: the time loop accumulates the loss, one backward after it (correct)."""
import torch


def sequence_loss(cell, readout, xs, ys, opt):
    h = torch.zeros(1, 32)
    total = 0.0
    for t in range(len(xs)):
        h = cell(xs[t], h)
        total = total + torch.nn.functional.mse_loss(readout(h), ys[t])
    opt.zero_grad()
    total.backward()
    opt.step()
