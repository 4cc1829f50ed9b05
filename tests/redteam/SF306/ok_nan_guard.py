"""-inf padding fill, but fully masked rows are zeroed after the softmax."""
import torch


def attend(scores, keep):
    scores = scores.masked_fill(~keep[:, None, :], float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    probs = torch.nan_to_num(probs, nan=0.0)
    return probs
