"""Near miss: a rollout method stores log-probabilities on self; the update method differentiates them."""
import torch


class Agent:
    def __init__(self, policy, optimizer):
        self.policy = policy
        self.optimizer = optimizer
        self.log_probs = []

    def rollout(self, policy, env, steps):
        obs = env.reset()
        for _ in range(steps):
            dist = policy(obs)
            action = dist.sample()
            self.log_probs.append(dist.log_prob(action))
            obs = env.step(action)

    def update(self, env):
        self.rollout(self.policy, env, 100)
        loss = -torch.stack(self.log_probs).sum()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.log_probs = []
