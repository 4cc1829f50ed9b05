"""A causal mask built with a method chain `ones(...).triu(1).bool()`, -inf fill, softmax."""
import torch


def causal_attention(q, k, v):
    n = q.size(-2)
    future = torch.ones(n, n, device=q.device).triu(1).bool()
    scores = (q @ k.transpose(-2, -1)).masked_fill(future, float("-inf"))
    return scores.softmax(-1) @ v
