"""A trainer method validates under no_grad right after model.train(), never calling eval()."""
import torch
import torch.nn.functional as F


class Loop:
    def __init__(self, model, opt):
        self.model = model
        self.opt = opt

    def epoch(self, train_dl, val_dl):
        self.model.train()
        for x, y in train_dl:
            self.opt.zero_grad()
            F.mse_loss(self.model(x), y).backward()
            self.opt.step()
        with torch.no_grad():
            for x, y in val_dl:
                print(F.mse_loss(self.model(x), y).item())  # expect: SF407
