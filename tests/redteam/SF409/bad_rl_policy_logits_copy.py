"""Policy-gradient update: log-probs copied with `clone().detach().requires_grad_()` (bad)."""
import torch


class Reinforce:
    def __init__(self, policy, lr=1e-3):
        self.policy = policy
        self.opt = torch.optim.Adam(policy.parameters(), lr=lr)

    def update(self, states, actions, returns):
        logp = self.policy(states).log_softmax(-1).gather(1, actions.unsqueeze(1)).squeeze(1)
        logp = logp.clone().detach().requires_grad_(True)  # expect: SF409
        loss = -(logp * returns).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
