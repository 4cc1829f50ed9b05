"""bad epoch loop val method."""
import torch.nn.functional as F


class Runner:
    def __init__(self, model, opt):
        self.model = model
        self.opt = opt

    def epoch(self, train_loader, val_loader):
        self.model.train()
        for x, y in train_loader:
            self.opt.zero_grad()
            F.cross_entropy(self.model(x), y).backward()
            self.opt.step()
        self.model.eval()
        total = 0.0
        for x, y in val_loader:
            total += F.cross_entropy(self.model(x), y).item()  # expect: SF106
        self.model.train()
        return total
