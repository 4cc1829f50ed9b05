"""Hangs after two optimizer steps (waiting on something that never comes)."""

import time

import torch


def wait_for_data():
    while True:
        time.sleep(0.1)


model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for it in range(10):
    if it == 2:
        wait_for_data()
    loss = model(torch.randn(2, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
