"""-1e4 fits in float16 (BERT's additive mask value), under float16 autocast."""
import torch

with torch.autocast("cuda", dtype=torch.float16):
    scores = q @ k.transpose(-2, -1)
    scores = scores.masked_fill(pad_mask, -1e4)
    attn = scores.softmax(-1)
