"""`env.step()` after a backward pass is an environment step, not an optimizer step."""
import torch


def rollout_and_probe(policy, env, obs, steps):
    for t in range(steps):
        action = policy(obs)
        saliency = torch.autograd.grad(action.sum(), obs)[0]
        action.sum().backward()
        obs, reward, done, info = env.step(action.detach())
