def masked_mean(loss, mask):
    return (loss * mask).sum() / (mask.sum() + 1e-8)
