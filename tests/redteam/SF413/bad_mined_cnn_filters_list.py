"""Mined (small image CNN): convolutions built from parallel filter/kernel lists, kept in a plain list."""
import torch.nn as nn
from torch.nn.functional import max_pool2d, relu


class SmallCNN(nn.Module):
    def __init__(self, c_in, n_cls=10, filters=(30, 50), kernels=(5, 3)):
        super().__init__()
        ins = [c_in] + list(filters[:-1])
        self.stages = [nn.Conv2d(ins[i], filters[i], kernels[i]) for i in range(len(filters))]  # expect: SF413
        self.drop = nn.Dropout(0.3)
        self.fc = nn.Linear(5 * 5 * filters[-1], n_cls)

    def forward(self, x):
        for stage in self.stages:
            x = max_pool2d(relu(stage(x)), 2)
        return self.fc(self.drop(x.flatten(1)))
