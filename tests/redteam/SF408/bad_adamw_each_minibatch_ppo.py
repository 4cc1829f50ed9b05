"""PPO minibatch loop builds AdamW for every minibatch."""
import torch


def ppo_epochs(policy, minibatches, lr):
    for mb in minibatches:
        opt = torch.optim.AdamW(policy.parameters(), lr=lr)  # expect: SF408
        opt.zero_grad()
        policy.ppo_loss(mb).backward()
        opt.step()
