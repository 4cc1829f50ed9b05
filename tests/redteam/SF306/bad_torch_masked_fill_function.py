"""The function form torch.masked_fill with -1e10 in a file that converts its model with to(torch.half)."""
import torch
import torch.nn.functional as F


def attend(scores, mask, v):
    scores = torch.masked_fill(scores, mask, -1e10)  # expect: SF306
    return F.softmax(scores, dim=-1) @ v


model = Seq2Seq().to(torch.half)
