"""A loss module of the file named for what it measures (`SoftJaccard`) is handed a copy of the model's
output cut from the graph and made to require grad again: its value is backpropagated, and no gradient
reaches the model."""
import torch
from torch import nn


class SoftJaccard(nn.Module):
    def forward(self, logits, mask):
        probs = torch.sigmoid(logits)
        overlap = (probs * mask).sum()
        return 1 - overlap / (probs.sum() + mask.sum() - overlap)


def fit(segmenter, batches, optimizer):
    jaccard = SoftJaccard()
    for images, mask in batches:
        logits = segmenter(images)
        cut = logits.detach().requires_grad_(True)  # expect: SF409
        value = jaccard(cut, mask)
        optimizer.zero_grad()
        value.backward()
        optimizer.step()
