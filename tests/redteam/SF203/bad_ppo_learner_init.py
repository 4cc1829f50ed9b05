"""An RL learner turns anomaly mode on when it is built; its `learn` method runs the updates."""
import torch


class PPOLearner:
    def __init__(self, policy, lr=3e-4):
        self.policy = policy
        self.optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
        torch.autograd.set_detect_anomaly(True)  # expect: SF203

    def learn(self, rollouts):
        for mb in rollouts.minibatches(4):
            loss = self.policy.surrogate_loss(mb)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
