"""Multi-task loss: the per-task losses are gathered with torch.tensor and summed; the copy keeps none
of their graphs (re-enabled with requires_grad_ to make backward run)."""
import torch
from torch import nn


class MultiTask:
    def __init__(self, net, heads):
        self.net, self.heads = net, heads
        self.cls_loss = nn.CrossEntropyLoss()
        self.reg_loss = nn.MSELoss()

    def step(self, x, targets, opt):
        feats = self.net(x)
        first = self.cls_loss(self.heads[0](feats), targets[0])
        second = self.reg_loss(self.heads[1](feats), targets[1])
        total = torch.tensor([first, second]).sum()  # expect: SF409
        total.requires_grad_()  # expect: SF409
        opt.zero_grad()
        total.backward()
        opt.step()
