"""argparse script; the data order comes from numpy's global RNG and the head is initialised with nn.init."""
import argparse

import numpy as np
import torch
from torch import nn


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--lr", type=float, default=1e-3)
    return p.parse_args()


def run(args):
    head = nn.Parameter(torch.empty(64, 10))
    nn.init.kaiming_uniform_(head)
    opt = torch.optim.Adam([head], lr=args.lr)
    idx = np.random.permutation(len(features))
    for i in idx:
        loss = nn.functional.cross_entropy(features[i] @ head, labels[i])
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":  # expect: SF420
    run(parse())
