"""Module-level loop: a LambdaLR warm-up stepped per micro-batch, the optimizer every 4."""
import torch
from torch.optim import lr_scheduler as schedules

net = torch.nn.Linear(8, 1)
adam = torch.optim.Adam(net.parameters(), lr=1e-3)
warm = schedules.LambdaLR(adam, lambda n: min(1.0, (n + 1) / 1000))
for n, (features, target) in enumerate(batches):
    loss = (net(features) - target).pow(2).mean() / 4
    loss.backward()
    if (n + 1) % 4 == 0:
        adam.step()
        adam.zero_grad()
    warm.step()  # expect: SF418
