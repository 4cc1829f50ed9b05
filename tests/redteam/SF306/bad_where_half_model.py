"""torch.where fills -1e9 into float16 logits (a half model): silently -inf, NaN for fully masked rows."""
import torch


def pointer(query, keys, valid):
    logits = torch.einsum("bd,bnd->bn", query, keys)
    logits = torch.where(valid, logits, -1e9)  # expect: SF306
    return logits.log_softmax(-1)


decoder = PointerDecoder().cuda().half()
