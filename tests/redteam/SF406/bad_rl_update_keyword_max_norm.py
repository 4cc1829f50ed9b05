"""A policy-gradient update: keyword max_norm, clip after the step."""
import torch


class PG:
    def __init__(self, policy):
        self.policy = policy
        self.optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)

    def update(self, batch):
        loss = -(self.policy.log_prob(batch.obs, batch.act) * batch.adv).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        torch.nn.utils.clip_grad_norm_(self.policy.parameters(), max_norm=0.5)  # expect: SF406
