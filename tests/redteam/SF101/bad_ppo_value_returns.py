"""PPO update: the GAE returns are made to require grad before the value-function MSE, where they are only the target (bad)."""
import torch
import torch.nn.functional as F


def ppo_update(policy, optimizer, rollout, clip=0.2, vf_coef=0.5, epochs=4):
    obs, actions, old_logp, advantages, returns = rollout
    returns = returns.detach().requires_grad_(True)  # expect: SF101
    for _ in range(epochs):
        dist, values = policy(obs)
        logp = dist.log_prob(actions)
        ratio = torch.exp(logp - old_logp)
        surr = torch.min(ratio * advantages, torch.clamp(ratio, 1 - clip, 1 + clip) * advantages)
        value_loss = F.mse_loss(values.squeeze(-1), returns)
        loss = -surr.mean() + vf_coef * value_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
