"""A dataclass config and a plain builder class hold lists of layer sizes and layers; neither is a module."""
from dataclasses import dataclass, field

import torch.nn as nn


@dataclass
class MLPConfig:
    sizes: list = field(default_factory=lambda: [64, 64])


class Builder:
    def __init__(self, cfg: MLPConfig):
        self.layers = [nn.Linear(a, b) for a, b in zip(cfg.sizes, cfg.sizes[1:])]

    def build(self):
        return nn.Sequential(*self.layers)
