"""Per-pixel classifier whose forward returns the raw class scores; probabilities only for inference."""
import torch
import torch.nn as nn


class PixelClassifier(nn.Module):
    def __init__(self, channels: int, classes: int):
        super().__init__()
        self.encode = nn.Sequential(nn.Conv2d(channels, 32, 3, padding=1), nn.ReLU())
        self.classify = nn.Conv2d(32, classes, 1)

    def forward(self, image):
        scores = self.classify(self.encode(image))
        return scores

    @torch.no_grad()
    def probabilities(self, image):
        return torch.softmax(self.forward(image), dim=1)
