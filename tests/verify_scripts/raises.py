"""Raises in the fourth iteration, from the user's own helper."""

import torch


def check_batch(batch, it):
    if it == 3:
        raise ValueError(f"corrupt batch at iteration {it}")


model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for it in range(10):
    batch = torch.randn(2, 4)
    check_batch(batch, it)
    loss = model(batch).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
