"""A DPO-style pairwise loss is the mean of -logsigmoid(margin); exp(logsigmoid) is only logged as the win probability."""
import torch
import torch.nn.functional as F


def step(policy, chosen, rejected, optimizer):
    margin = policy(chosen) - policy(rejected)
    loss = -F.logsigmoid(margin).mean()
    win_prob = torch.exp(F.logsigmoid(margin)).mean().item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return win_prob
