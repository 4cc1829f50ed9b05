"""Per-token cross entropy with reduction="none": already fused (ok)."""
import torch.nn.functional as F


def per_token_logps(logits, labels):
    flat = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), reduction="none")
    return -flat.view_as(labels)
