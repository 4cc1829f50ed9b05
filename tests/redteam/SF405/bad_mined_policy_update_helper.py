"""Mined (REINFORCE on Atari frames): a helper backpropagates reward*log-prob, then clears, then steps."""
import torch


def reinforce_update(opt, logp, ret):
    objective = ret * logp
    objective.backward()
    opt.zero_grad()  # expect: SF405
    opt.step()


def play(policy, env_steps, lr=1e-3):
    opt = torch.optim.RMSprop(policy.parameters(), lr=lr)
    for frame, reward in env_steps:
        dist = torch.distributions.Categorical(logits=policy(frame))
        action = dist.sample()
        reinforce_update(opt, dist.log_prob(action), reward)
