"""Sums over episodes of a rollout loop, two buffers per parameter (mean and square)."""
import torch


def policy_grad_stats(agent, env, episodes):
    ps = list(agent.actor.parameters())
    s1 = [torch.zeros(p.shape, device=p.device) for p in ps]  # expect: SF105
    s2 = [torch.zeros(p.shape, device=p.device) for p in ps]  # expect: SF105
    for ep in range(episodes):
        traj = agent.rollout(env)
        agent.actor.zero_grad()
        agent.pg_loss(traj).backward()
        for a, b, p in zip(s1, s2, ps):
            a.add_(p.grad)
            b.add_(p.grad.square())
    return [float((b / episodes - (a / episodes) ** 2).mean()) for a, b in zip(s1, s2)]
