"""The same log-probs give the entropy: the full tensor is needed anyway (ok)."""
import torch.nn.functional as F


def token_stats(logits, ids):
    log_prob = F.log_softmax(logits, dim=-1)
    entropy = -(log_prob.exp() * log_prob).sum(-1)
    return log_prob.gather(-1, ids.unsqueeze(-1)).squeeze(-1), entropy
