"""Mined shape: token log-probs for labels with -100 holes: clamp the labels, gather from `F.log_softmax(logits, dim=-1)`, zero the holes with torch.where (bad)."""
import torch
import torch.nn.functional as F


def label_logprobs(logits, labels):
    clamped = labels.clamp_min(0)
    picked = torch.gather(F.log_softmax(logits, dim=-1), dim=-1, index=clamped.unsqueeze(-1)).squeeze(-1)  # expect: SF104
    return torch.where(labels == -100, torch.zeros_like(picked), picked)
