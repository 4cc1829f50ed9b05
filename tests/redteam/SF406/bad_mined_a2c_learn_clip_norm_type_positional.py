"""Mined (actor-critic learner): the stored transitions' loss is averaged, stepped, then clipped with the norm type passed positionally."""
import torch
from torch import nn


def learn(model, optimizer, gamma=0.99, policy_coef=1.0, critic_coef=0.5):
    loss = 0
    for s, a, r, s_next, alive in model.memory:
        policy, value = model(s)
        target = r + gamma * model(s_next)[1] * alive
        adv = target.detach() - value
        loss = loss - policy_coef * torch.log(policy[a]) * adv.detach() + critic_coef * adv ** 2
    loss = loss / len(model.memory)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    nn.utils.clip_grad_norm_(model.parameters(), 6, 2)  # expect: SF406
    model.memory = []
    return loss
