"""Near miss of bad_mined_loss_forward_marks_target: the loss's forward marks a float copy of its target and
differentiates a smoothed copy of it with respect to that copy to weight the mask boundaries (the gradient is read
inside the loss, silent)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BoundaryWeightedLoss(nn.Module):
    def forward(self, scores, target):
        target = target.float()
        target.requires_grad = True
        smooth = F.avg_pool2d(target, 3, stride=1, padding=1)
        (edges,) = torch.autograd.grad(smooth.pow(2).sum(), target)
        weight = 1.0 + edges.abs()
        return (weight * F.binary_cross_entropy_with_logits(scores, target.detach(), reduction="none")).mean()


def train(model, loader, optimizer):
    criterion = BoundaryWeightedLoss()
    for images, masks in loader:
        loss = criterion(model(images), masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
