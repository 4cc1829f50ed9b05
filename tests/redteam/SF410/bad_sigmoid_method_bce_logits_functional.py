"""Segmentation step: `.sigmoid()` then `binary_cross_entropy_with_logits` (bad)."""
import torch.nn.functional as F


class SegTrainer:
    def __init__(self, unet, optimizer):
        self.unet = unet
        self.optimizer = optimizer

    def train_step(self, image, mask):
        pred = self.unet(image).sigmoid()
        loss = F.binary_cross_entropy_with_logits(pred, mask)  # expect: SF410
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach()
