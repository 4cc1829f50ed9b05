"""Mined (DQN agent): the TD loss of a held criterion clipped (keyword max_norm) before the update."""
import torch
import torch.nn.functional as F
from torch import nn


class Agent:
    def __init__(self, q_net, n_actions, discount=0.99):
        self.q_net = q_net
        self.n_actions = n_actions
        self.discount = discount
        self.criterion = nn.SmoothL1Loss()
        self.optimizer = torch.optim.Adam(q_net.parameters(), lr=1e-3)

    def learn(self, states, actions, rewards, next_states, dones):
        with torch.no_grad():
            best_next = self.q_net(next_states).max(-1).values
        target = rewards + (1.0 - dones) * self.discount * best_next
        qs = self.q_net(states)
        chosen = (F.one_hot(actions, self.n_actions) * qs).sum(-1)
        loss = self.criterion(chosen, target)
        nn.utils.clip_grad_norm_(loss, max_norm=10)  # expect: SF417
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
