"""Sequence tagger: probabilities reshaped to (B*T, C) before `F.cross_entropy` (bad)."""
import torch.nn.functional as F


def tagger_loss(model, tokens, tags):
    emissions = model(tokens)
    probs = emissions.softmax(-1)
    return F.cross_entropy(probs.view(-1, probs.size(-1)), tags.view(-1))  # expect: SF410
