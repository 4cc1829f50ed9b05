"""The dict kept on the module came from a file, not from the module: a loose reload of it is unchecked."""
import torch
import torch.nn as nn


class Finetuner:
    def __init__(self, width):
        self.backbone = nn.Sequential(nn.Linear(width, width), nn.LayerNorm(width))

    def remember(self, path):
        network = self.backbone
        network._pretrained = torch.load(path, map_location="cpu")

    def reset(self):
        network = self.backbone
        network.load_state_dict(network._pretrained, strict=False)  # expect: SF412
        network._pretrained = None
