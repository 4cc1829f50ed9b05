"""Gather along the sequence dim with an expanded index, of a vocab log-softmax (ok)."""
import torch


def last_position_logprobs(logits, lengths):
    lp = torch.log_softmax(logits, dim=-1)
    index = (lengths - 1).view(-1, 1, 1).expand(-1, 1, lp.size(-1))
    return torch.gather(lp, 1, index).squeeze(1)
