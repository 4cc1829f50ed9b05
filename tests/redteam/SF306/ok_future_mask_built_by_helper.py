"""Decoder scores masked with a strictly-upper-triangular mask that a helper of the file builds."""
import torch


def future_positions(length, device):
    return torch.ones(length, length, dtype=torch.bool, device=device).triu(diagonal=1)


def decoder_attention(q, k, v):
    length = q.size(1)
    blocked = future_positions(length, q.device)
    scores = q @ k.transpose(1, 2) / q.size(-1) ** 0.5
    scores.masked_fill_(blocked, float("-inf"))
    return scores.softmax(-1) @ v
