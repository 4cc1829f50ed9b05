"""A soft-Jaccard objective of the project whose `forward` flags the mask it receives as requiring grad."""
import torch.nn as nn


class SoftJaccardLoss(nn.Module):
    def __init__(self, smooth=1.0):
        super().__init__()
        self.smooth = smooth

    def forward(self, probs, mask):
        mask.requires_grad = True
        overlap = (probs * mask).sum()
        union = probs.sum() + mask.sum() - overlap
        return 1 - (overlap + self.smooth) / (union + self.smooth)
