"""Mined shape: a runner class's fit() resumes `self.net` and the optimizer from torch.load without map_location before its epoch loop (bad)."""
import os

import torch


class PoseRunner:
    def __init__(self, net):
        self.net = net

    def fit(self, args, loader):
        optimizer = torch.optim.SGD(self.net.parameters(), lr=args.lr, momentum=0.9)
        start_epoch = 0
        if args.resume and os.path.isfile(args.resume):
            blob = torch.load(args.resume)  # expect: SF107
            start_epoch = blob["epoch"]
            self.net.load_state_dict(blob["state_dict"])
            optimizer.load_state_dict(blob["optimizer"])
        for epoch in range(start_epoch, args.epochs):
            for x, y in loader:
                loss = torch.nn.functional.mse_loss(self.net(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
