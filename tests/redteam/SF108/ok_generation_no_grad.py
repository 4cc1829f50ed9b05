"""Greedy decoding under `torch.no_grad()` feeds the state back (no graph, correct)."""
import torch


def greedy(model, bos, steps):
    tok, state, out = bos, None, []
    with torch.no_grad():
        for _ in range(steps):
            logits, state = model(tok, state)
            tok = logits.argmax(-1)
            out.append(tok)
    return out
