"""Padding features zeroed with masked_fill(…, 0) in a float16 file."""
import torch

with torch.autocast("cuda", dtype=torch.float16):
    feats = encoder(x)
    feats = feats.masked_fill(~valid.unsqueeze(-1), 0.0)
    mean = feats.sum(1) / valid.sum(1, keepdim=True)
