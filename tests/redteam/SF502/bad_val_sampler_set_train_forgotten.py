"""Two samplers; set_epoch is called on the evaluation one while the training one is left alone."""
import torch
from torch.utils.data import DataLoader, DistributedSampler


def main(model, train_set, test_set, opt, epochs):
    train_s = DistributedSampler(train_set)  # expect: SF502
    test_s = DistributedSampler(test_set, shuffle=True)
    train_dl = DataLoader(train_set, batch_size=64, sampler=train_s)
    test_dl = DataLoader(test_set, batch_size=64, sampler=test_s)
    for epoch in range(epochs):
        test_s.set_epoch(epoch)
        for x, y in train_dl:
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
        for x, y in test_dl:
            model(x)
