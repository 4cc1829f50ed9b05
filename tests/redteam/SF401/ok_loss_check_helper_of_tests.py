"""Loss unit tests that share a helper: the helper's loss of a tensor with itself is the property under test."""
import torch
import torch.nn.functional as F


def self_distance(features, reduction="mean"):
    return F.smooth_l1_loss(features, features, reduction=reduction)


def test_self_distance_is_zero():
    features = torch.randn(8, 16)
    assert self_distance(features).item() == 0.0


def test_self_distance_is_zero_per_element():
    features = torch.randn(2, 5)
    per_element = self_distance(features, reduction="none")
    assert torch.count_nonzero(per_element) == 0
