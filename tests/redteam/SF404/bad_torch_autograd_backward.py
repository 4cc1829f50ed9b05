"""`torch.autograd.backward` through an alias in a loop that never clears."""
import torch
from torch import autograd as ag

opt = torch.optim.RMSprop(policy.parameters(), lr=7e-4)
for rollout in rollouts:
    losses = [policy.loss(t) for t in rollout]
    ag.backward(losses)
    opt.step()  # expect: SF404
