"""Mined shape: a preference-optimisation helper gathers per-token log-probs with `torch.gather(logits.log_softmax(-1), dim=2, ...)` over the full [B, L, V] tensor (bad)."""
import torch


def sequence_logps(logits, labels, average=False):
    labels = labels[:, 1:].clone()
    logits = logits[:, :-1, :]
    keep = labels != -100
    labels[labels == -100] = 0
    per_token = torch.gather(logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2)  # expect: SF104
    if average:
        return (per_token * keep).sum(-1) / keep.sum(-1)
    return (per_token * keep).sum(-1)
