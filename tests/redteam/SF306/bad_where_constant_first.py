"""torch.where with the constant as the first branch (`where(keep, x, -1e9)` spelled `where(~keep, -1e9, x)`), in a float16 autocast file."""
import torch


def masked_logits(logits, keep):
    logits = torch.where(~keep, -1e9, logits.exp().log())  # expect: SF306
    return logits.softmax(-1)


with torch.autocast("cuda", dtype=torch.float16):
    probs = masked_logits(head(features), keep)
