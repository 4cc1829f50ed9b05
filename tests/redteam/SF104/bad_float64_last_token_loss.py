"""Grokking-style loss: float64 logits, method log_softmax bound to a name, gathered with labels[:, None] (bad)."""
def loss_fn(logits, labels):
    if logits.dim() == 3:
        logits = logits[:, -1]
    logits = logits.double()
    log_probs = logits.log_softmax(dim=-1)
    correct = log_probs.gather(dim=-1, index=labels[:, None])[:, 0]  # expect: SF104
    return -correct.mean()
