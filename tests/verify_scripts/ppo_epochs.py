"""PPO-style updates: each rollout is followed by several epochs of minibatch optimizer steps.
`--spike` makes the first minibatch of every rollout give a huge gradient (the later ones are small),
which only a check of every optimizer step sees when steps are grouped per rollout."""

import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--spike", action="store_true")
args = parser.parse_args()

torch.manual_seed(0)
policy = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
optimizer = torch.optim.SGD(policy.parameters(), lr=1e-3)
for rollout in range(20):
    observations = torch.randn(64, 6)
    actions = torch.randint(0, 3, (64,))
    advantages = torch.randn(64)
    for epoch in range(2):
        for minibatch in range(2):
            rows = slice(minibatch * 32, (minibatch + 1) * 32)
            scale = 1000.0 if args.spike and epoch == 0 and minibatch == 0 else 1.0  # unnormalized advantages
            logp = torch.log_softmax(policy(observations[rows]), dim=-1)
            loss = -(logp[torch.arange(32), actions[rows]] * advantages[rows] * scale).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
