"""A loss helper whose parameter is annotated as a tensor casts it with `.float()` as a statement."""
import torch
from torch import Tensor


def focal_loss(logits: Tensor, target: Tensor, gamma: float = 2.0) -> Tensor:
    logits.float()  # expect: SF416
    p = torch.sigmoid(logits)
    ce = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")
    return (ce * (1 - p) ** gamma).mean()
