"""Mined shape: an actor-critic script enables anomaly detection at module level next to its hyper-parameters and trains at module level (bad)."""
import gym
import torch
import torch.nn as nn
import torch.optim as optim

env = gym.make("CartPole-v1")
torch.autograd.set_detect_anomaly(True)  # expect: SF203
gamma = 0.99
policy = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 2))
optimizer = optim.Adam(policy.parameters(), lr=1e-3)

for episode in range(200):
    state, _ = env.reset()
    log_probs, rewards = [], []
    done = False
    while not done:
        dist = torch.distributions.Categorical(logits=policy(torch.as_tensor(state, dtype=torch.float32)))
        action = dist.sample()
        state, reward, terminated, truncated, _ = env.step(action.item())
        done = terminated or truncated
        log_probs.append(dist.log_prob(action))
        rewards.append(reward)
    loss = -torch.stack(log_probs).sum() * sum(rewards)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
