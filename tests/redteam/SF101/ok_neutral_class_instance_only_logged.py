"""Near miss: the same kind of module (`SoftJaccard`) computed on a marked mask, but its result is only
logged; the step backpropagates another loss whose target is plain. The mask is no loss target."""
import torch
import torch.nn.functional as F
from torch import nn


class SoftJaccard(nn.Module):
    def forward(self, logits, mask):
        probs = torch.sigmoid(logits)
        overlap = (probs * mask).sum()
        return overlap / (probs.sum() + mask.sum() - overlap)


def fit(segmenter, batches, optimizer, log):
    score = SoftJaccard()
    for images, labels, mask in batches:
        mask = mask.float().requires_grad_(True)
        logits = segmenter(images)
        loss = F.binary_cross_entropy_with_logits(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log(score(logits.detach(), mask).item())
