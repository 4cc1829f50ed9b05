"""Entries that fail in the ways `stabfix verify` must report (selected with --entry)."""

import time

import torch
from torch import nn


def _setup(device):
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 8, device=device)
    return model, opt, x


def entry_raises(device):
    raise RuntimeError("dataset shard 7 is missing")


def step_raises(device):
    # (models, step) and no optimizer: these error cases stay cheap to run
    model = nn.Linear(8, 1).to(device)
    x = torch.randn(16, 8, device=device)
    calls = []

    def step():
        calls.append(1)
        if len(calls) == 3:
            raise ValueError("bad batch at call 3")
        loss = model(x).mean()
        loss.backward()
        return loss

    return model, step


def hangs(device):
    model = nn.Linear(8, 1).to(device)

    def step():
        while True:  # a step that never finishes
            time.sleep(0.05)

    return model, step


def nan_loss(device):
    model, opt, x = _setup(device)

    def step():
        opt.zero_grad()
        loss = model(x).mean() * float("nan")
        loss.backward()
        opt.step()
        return loss.detach()

    return model, opt, step


class Amplify(nn.Module):
    """Multiplies by a huge factor: its output overflows to inf once inputs are large enough."""

    def forward(self, x):
        return x * 1e30


def explodes(device):
    model = nn.Sequential(nn.Linear(8, 8), Amplify(), nn.Linear(8, 8), nn.Linear(8, 1)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 8, device=device) * 1e10

    def step():
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        return loss.detach()

    return model, opt, step


def wrong_return(device):
    return 42


def no_loss(device):
    model, opt, x = _setup(device)

    def step():
        opt.zero_grad()
        model(x).mean().backward()
        opt.step()

    return [model], step


def crash(device):
    model = nn.Linear(8, 1).to(device)

    def step():
        import os

        os._exit(7)  # the process dies without a Python exception

    return model, step
