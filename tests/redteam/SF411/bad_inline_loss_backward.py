"""The loss is computed inline on the backward call (`F.l1_loss(...).backward()`), accumulated (bad)."""
import torch
import torch.nn.functional as F


def train(net, loader, opt, k):
    for i, (lq, gt) in enumerate(loader):
        F.l1_loss(net(lq), gt).backward()  # expect: SF411
        if (i + 1) % k == 0:
            opt.step()
            opt.zero_grad()
