"""A textbook evaluate_loss(): forwards over a data iterator with autograd on and no eval() switch."""
import torch


def evaluate_loss(net, data_iter, loss):
    total, count = 0.0, 0
    for X, y in data_iter:
        out = net(X)  # expect: SF106
        l = loss(out, y.reshape(out.shape))
        total += float(l.sum())
        count += l.numel()
    return total / count
