"""DQN agent whose learn() (backward + optimizer step, called every env step) ends with torch.cuda.empty_cache() (bad)."""
import torch
import torch.nn.functional as F


class Agent:
    def __init__(self, q, q_target, optimizer, gamma=0.99):
        self.q, self.q_target, self.optimizer, self.gamma = q, q_target, optimizer, gamma

    def learn(self, s, a, r, s2, done):
        q = self.q(s).gather(1, a[:, None]).squeeze(1)
        with torch.no_grad():
            target = r + self.gamma * (1 - done) * self.q_target(s2).max(1).values
        loss = F.mse_loss(q, target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        torch.cuda.empty_cache()  # expect: SF201
        return loss.item()
