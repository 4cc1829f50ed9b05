"""Mined (DQN agent method): per-sample squared TD errors summed from Q outputs, then re-wrapped with torch.tensor(..., requires_grad=True) and backpropagated."""
import copy

import torch


class TinyDQN:
    def __init__(self, qnet, lr=1e-3, gamma=0.9):
        self.q = qnet
        self.q_target = copy.deepcopy(qnet)
        self.gamma = gamma
        self.opt = torch.optim.Adam(self.q.parameters(), lr=lr)

    def learn(self, states, actions, rewards, next_states, dones):
        total = 0
        for s, a, r, s2, done in zip(states, actions, rewards, next_states, dones):
            goal = r if done else r + self.gamma * torch.max(self.q_target(s2)).item()
            total += (goal - self.q(s)[a]) ** 2
        total /= len(states)
        total = torch.tensor(total, requires_grad=True)  # expect: SF409
        self.opt.zero_grad()
        total.backward()
        self.opt.step()
