"""Mined (keyword-spotting ResNet): a conv list whose members are each registered with add_module."""
import torch.nn as nn


class ResKWS(nn.Module):
    def __init__(self, n_maps, n_layers):
        super().__init__()
        self.convs = [nn.Conv2d(n_maps, n_maps, 3, padding=1, bias=False) for _ in range(n_layers)]
        for i, conv in enumerate(self.convs):
            self.add_module(f"bn{i + 1}", nn.BatchNorm2d(n_maps, affine=False))
            self.add_module(f"conv{i + 1}", conv)

    def forward(self, x):
        for conv in self.convs:
            x = conv(x).relu()
        return x
