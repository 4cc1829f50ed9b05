"""Top-k sampling (as in a generation utility of the real corpus): logits below the k-th largest become -inf; every row keeps its maximum."""
import torch


def sample_top_k(logits, k, temperature=1.0):
    logits = logits / max(temperature, 1e-5)
    top, _ = torch.topk(logits, k)
    pivot = top[..., -1:]
    logits = torch.where(logits < pivot, -float("inf"), logits)
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs, 1)
