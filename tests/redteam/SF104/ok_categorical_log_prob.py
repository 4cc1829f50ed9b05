"""Categorical(logits=...).log_prob: a distribution object, used for entropy too (ok)."""
import torch
from torch.distributions import Categorical


def evaluate(actor, obs, actions):
    dist = Categorical(logits=actor(obs))
    return dist.log_prob(actions), dist.entropy()
