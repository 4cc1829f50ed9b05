"""Mined shape: a policy-gradient trainer method gathers the taken actions' log-probs from `torch.log_softmax(logits, dim=-1)` over every vocabulary entry (bad)."""
import torch


class RolloutUpdater:
    def __init__(self, policy, optimizer):
        self.policy = policy
        self.optimizer = optimizer

    def policy_loss(self, rollout):
        logits = self.policy(rollout.obs).logits
        rewards = rollout.rewards.to(logits.dtype)
        taken = torch.gather(torch.log_softmax(logits, dim=-1), dim=-1, index=rollout.actions.unsqueeze(-1)).squeeze(-1)  # expect: SF104
        taken = torch.masked_select(taken.view(-1), rollout.mask.view(-1))
        rewards = torch.masked_select(rewards.view(-1), rollout.mask.view(-1))
        return -(rewards * taken).mean()
