"""Modules move in place: a Sequential, a submodule of self, a module class of the file and its cast."""
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.backbone(x))

    def prepare(self, device):
        self.backbone.to(device)
        self.head.half()


def build(device):
    model = Net()
    model.to(device)
    model.eval()
    seq = nn.Sequential(nn.Linear(2, 2))
    seq.cuda()
    return model, seq
