"""The checkpointed block's input is the activation of a trainable stem convolution."""
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class ResNetish(nn.Module):
    def __init__(self, stages):
        super().__init__()
        self.stem = nn.Conv2d(3, 64, 7, stride=2)
        self.stages = stages

    def forward(self, x):
        h = self.stem(x)
        for stage in self.stages:
            h = checkpoint(stage, h)
        return h
