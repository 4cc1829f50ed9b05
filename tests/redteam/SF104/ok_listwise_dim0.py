"""Listwise ranking: log-softmax over dim 0 (ok)."""
import torch


def listwise_loss(scores, relevant):
    lp = torch.log_softmax(scores, dim=0)
    return -lp.gather(0, relevant.unsqueeze(0)).mean()
