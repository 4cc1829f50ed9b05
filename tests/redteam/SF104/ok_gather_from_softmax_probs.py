"""Gather from softmax probabilities, not from a log-softmax (ok)."""
import torch


def picked_probs(logits, ids):
    probs = torch.softmax(logits, dim=-1)
    return probs.gather(-1, ids.unsqueeze(-1)).squeeze(-1), torch.log_softmax(logits, -1).max(-1).values
