"""Masked mean: a division by a count plus 1e-8 (ok)."""
def masked_mean(loss, mask):
    return (loss * mask).sum() / (mask.sum() + 1e-8)
