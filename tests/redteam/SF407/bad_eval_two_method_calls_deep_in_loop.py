"""The epoch loop calls a method that calls an evaluation method leaving eval mode on."""
import torch


class Runner:
    def __init__(self, net, optimizer, batches, val_loader):
        self.net = net
        self.optimizer = optimizer
        self.batches = batches
        self.val_loader = val_loader

    def run_validation(self):
        self.net.eval()
        total = 0.0
        with torch.no_grad():
            for x, y in self.val_loader:
                total += (self.net(x) - y).pow(2).mean().item()
        return total

    def end_of_epoch(self, epoch):
        score = self.run_validation()
        print(epoch, score)

    def fit(self, epochs):
        self.net.train()
        for epoch in range(epochs):
            for x, y in self.batches:
                loss = (self.net(x) - y).pow(2).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            self.end_of_epoch(epoch)  # expect: SF407
