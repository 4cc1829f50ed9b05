"""Per-pixel classifier whose forward already turns the class scores into probabilities."""
import torch
import torch.nn as nn


class PixelClassifier(nn.Module):
    def __init__(self, channels: int, classes: int):
        super().__init__()
        self.encode = nn.Sequential(nn.Conv2d(channels, 32, 3, padding=1), nn.ReLU())
        self.classify = nn.Conv2d(32, classes, 1)

    def forward(self, image):
        scores = self.classify(self.encode(image))
        return torch.softmax(scores, dim=1)
