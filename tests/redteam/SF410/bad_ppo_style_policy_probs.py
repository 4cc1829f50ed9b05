"""Imitation warm-start of a policy: action probabilities from `torch.softmax` into `F.cross_entropy` (bad)."""
import torch
import torch.nn.functional as F


def pretrain_policy(policy, demos, optimizer, epochs=3):
    for _ in range(epochs):
        for obs, act in demos:
            action_probs = torch.softmax(policy(obs), dim=-1)
            loss = F.cross_entropy(action_probs, act)  # expect: SF410
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
