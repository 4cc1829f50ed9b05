"""Mined shape: a full-dataset gradient helper allocates zeros_like per parameter, adds `torch.autograd.grad` chunks into them across the chunk loop, and returns them to a caller that flattens and reads them (bad)."""
import torch
import torch.nn.functional as F


def dataset_gradient(net, xs, ys, chunk=2000):
    net.zero_grad()
    sums = [torch.zeros_like(w) for w in net.parameters()]  # expect: SF105
    seen = 0
    for start in range(0, xs.shape[0], chunk):
        xb, yb = xs[start:start + chunk], ys[start:start + chunk]
        loss = F.cross_entropy(net(xb), yb)
        grads = torch.autograd.grad(loss, net.parameters())
        weight = xb.shape[0]
        for s, g in zip(sums, grads):
            s += g.detach() * weight
        seen += weight
    return [s / seen for s in sums]


def gradient_norm(net, xs, ys):
    full = dataset_gradient(net, xs, ys)
    flat = torch.cat([t.reshape(-1) for t in full])
    return flat.norm().item()
