"""Top-k sampling whose threshold comes from a helper returning the top values of the same logits."""
import torch


def best_scores(logits, k):
    return torch.topk(logits, k, dim=-1)


def sample_next(logits, k=50, temperature=0.8):
    logits = logits / temperature
    kept, _ = best_scores(logits, k)
    logits = torch.where(logits < kept[..., -1:], -float("inf"), logits)
    return torch.multinomial(torch.softmax(logits, dim=-1), 1)
