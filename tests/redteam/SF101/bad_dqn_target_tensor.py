"""DQN learn(): the bootstrapped TD target is rebuilt with torch.tensor(..., requires_grad=True) and only used as the Huber target (bad)."""
import numpy as np
import torch
import torch.nn.functional as F


class DQNAgent:
    def __init__(self, q_net, target_net, optimizer, gamma=0.99, device="cuda"):
        self.q_net = q_net
        self.target_net = target_net
        self.optimizer = optimizer
        self.gamma = gamma
        self.device = device

    def learn(self, states, actions, rewards, next_states, dones):
        q_values = self.q_net(states).gather(1, actions.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            next_q = self.target_net(next_states).max(1)[0].cpu().numpy()
        td = rewards + self.gamma * next_q * (1 - dones)
        td_target = torch.tensor(td.astype(np.float32), device=self.device, requires_grad=True)  # expect: SF101
        loss = F.smooth_l1_loss(q_values, td_target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
