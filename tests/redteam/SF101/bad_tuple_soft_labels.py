"""Pseudo-label step: soft labels and a confidence mask come back as a tuple; the soft labels are then marked requires_grad before the BCE target (bad)."""
import torch
from torch.nn import functional as F


@torch.no_grad()
def make_pseudo_labels(teacher, x, threshold=0.7):
    probs = torch.sigmoid(teacher(x))
    return probs, (probs - 0.5).abs() * 2 > threshold


def pseudo_label_step(student, teacher, x_unlabeled, optimizer):
    soft, confident = make_pseudo_labels(teacher, x_unlabeled)
    soft.requires_grad_(True)  # expect: SF101
    logits = student(x_unlabeled)
    loss = F.binary_cross_entropy_with_logits(logits[confident], soft[confident])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
