"""Near miss of bad_mined_loss_compute_object: the parameter called in the epoch is a plain torch function the
callers pass; the file's own loss class (which differentiates) is never handed to it: silent."""
import torch
import torch.nn.functional as F


class LossCompute:
    def __init__(self, criterion, opt):
        self.criterion, self.opt = criterion, opt

    def __call__(self, x, y):
        loss = self.criterion(x, y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        return loss.item()


def run_epoch(batches, model, loss_compute):
    total = 0.0
    for x, y in batches:
        total += float(loss_compute(model(x), y))
    return total


def train_epoch(batches, model, step):
    for x, y in batches:
        step(model(x), y)


for epoch in range(10):
    model.train()
    train_epoch(train_batches, model, LossCompute(F.cross_entropy, opt))
    model.eval()
    with torch.no_grad():
        print(run_epoch(val_batches, model, F.cross_entropy))
