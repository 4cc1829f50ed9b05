"""The fill is the dtype's own lowest value, in a float16 file."""
import torch


def attend(scores, mask):
    scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)
    return scores.softmax(-1)


with torch.autocast("cuda", dtype=torch.float16):
    out = attend(q @ k.transpose(-2, -1), pad)
