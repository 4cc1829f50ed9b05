"""Cross-attention over a memory whose mask can be all False (empty memory): -math.inf and a softmax."""
import math

import torch


def cross_attend(q, memory, memory_mask):
    sim = torch.einsum("bqd,bkd->bqk", q, memory) / math.sqrt(q.size(-1))
    sim = sim.masked_fill(~memory_mask[:, None, :], -math.inf)  # expect: SF306
    attn = sim.softmax(dim=-1)
    return torch.einsum("bqk,bkd->bqd", attn, memory)
