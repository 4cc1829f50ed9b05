"""A loss module of the file named for what it measures (`SoftJaccard`, no `Loss` in its name): its
result is what the step backpropagates, so `mask` is a loss target, and nothing reads its gradient."""
import torch
from torch import nn


class SoftJaccard(nn.Module):
    def __init__(self, smooth: float = 1.0) -> None:
        super().__init__()
        self.smooth = smooth

    def forward(self, logits, mask):
        probs = torch.sigmoid(logits)
        overlap = (probs * mask).sum()
        union = probs.sum() + mask.sum() - overlap
        return 1 - (overlap + self.smooth) / (union + self.smooth)


def fit(segmenter, batches, optimizer):
    jaccard = SoftJaccard(smooth=0.5)
    for images, mask in batches:
        mask = mask.float().requires_grad_(True)  # expect: SF101
        logits = segmenter(images)
        total = 0.5 * jaccard(logits, mask) + 0.5 * logits.pow(2).mean()
        optimizer.zero_grad()
        total.backward()
        optimizer.step()
