"""Mined look-alike (lighting-estimation script): the accumulation count is the constant 1, so clip and scheduler run once per optimizer step."""
import torch
from torch.optim.lr_scheduler import LambdaLR


def optimize(envmap, render, target, steps, lr_lambda):
    optimizer = torch.optim.Adam(envmap.parameters(), lr=1e-2)
    scheduler = LambdaLR(optimizer, lr_lambda=lr_lambda)
    accumulation_steps = 1
    for i in range(steps):
        loss = torch.nn.functional.mse_loss(render(envmap), target) / accumulation_steps
        loss.backward()
        torch.nn.utils.clip_grad_norm_(envmap.parameters(), max_norm=1.0)
        scheduler.step()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
