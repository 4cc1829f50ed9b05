"""Agent update method: the clear comes after backward."""
import torch


class Agent:
    def __init__(self, policy):
        self.policy = policy
        self.optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)

    def learn(self, log_probs, returns):
        loss = -(log_probs * returns).sum()
        loss.backward()
        self.optimizer.zero_grad()  # expect: SF405
        self.optimizer.step()
