"""Mined shape: a DQN learner computes the bootstrapped TD target from the target network, then re-wraps it as Variable(target, requires_grad=True).cuda() before mse_loss (bad)."""
import torch
import torch.nn.functional as F
from torch.autograd import Variable


class QLearner:
    def __init__(self, online, frozen, optimizer, gamma=0.99):
        self.online = online
        self.frozen = frozen
        self.optimizer = optimizer
        self.gamma = gamma

    def learn(self, states, actions, rewards, next_states):
        bootstrap = rewards + self.gamma * self.frozen(next_states).max(dim=1).values
        bootstrap = Variable(bootstrap, requires_grad=True).cuda()  # expect: SF101
        chosen = self.online(states).gather(1, actions.long().unsqueeze(1)).squeeze(1)
        loss = F.mse_loss(chosen, bootstrap)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
