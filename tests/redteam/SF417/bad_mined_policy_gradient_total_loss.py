"""Mined (REINFORCE agent): the summed policy loss clipped instead of the policy's parameters."""
import torch
from torch.nn.utils import clip_grad_norm_


class Reinforce:
    def __init__(self, policy):
        self.policy = policy
        self.optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
        self.log_probs = []

    def update(self, advantages):
        terms = [-a * lp for a, lp in zip(advantages, self.log_probs)]
        total_loss = torch.stack(terms).sum()
        self.optimizer.zero_grad()
        total_loss.backward()
        clip_grad_norm_(total_loss, 0.1)  # expect: SF417
        self.optimizer.step()
        del self.log_probs[:]
