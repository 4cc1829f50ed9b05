"""Segmentation trainer: Dice + CE summed, accumulated over `self.cfg.accum_iter` iterations (bad)."""
import torch
import torch.nn.functional as F


class SegTrainer:
    def __init__(self, net, cfg):
        self.net = net
        self.cfg = cfg
        self.optim = torch.optim.SGD(net.parameters(), lr=cfg.lr, momentum=0.9)

    def train_epoch(self, loader):
        self.net.train()
        for it, (img, mask) in enumerate(loader):
            logits = self.net(img)
            loss = F.cross_entropy(logits, mask) + F.binary_cross_entropy_with_logits(logits[:, 1], mask.float())
            loss.backward()  # expect: SF411
            if (it + 1) % self.cfg.accum_iter == 0:
                self.optim.step()
                self.optim.zero_grad()
