"""Near miss of bad_mined_loss_compute_object: the loss-compute parameter gets instances of two classes (one
differentiates, one only measures), so which `__call__` runs in the evaluation is not shown: no summary, silent."""
import torch


class TrainLoss:
    def __init__(self, criterion, opt):
        self.criterion, self.opt = criterion, opt

    def __call__(self, x, y):
        loss = self.criterion(x, y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        return loss.item()


class MeasureLoss:
    def __init__(self, criterion):
        self.criterion = criterion

    def __call__(self, x, y):
        with torch.no_grad():
            return self.criterion(x, y).item()


def run_epoch(batches, model, loss_compute):
    total = 0.0
    for x, y in batches:
        total += loss_compute(model(x), y)
    return total


for epoch in range(10):
    model.train()
    run_epoch(train_batches, model, TrainLoss(criterion, opt))
    model.eval()
    print(run_epoch(val_batches, model, MeasureLoss(criterion)))
