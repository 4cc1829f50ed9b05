"""The mean of a model output (the objective itself) handed to clip_grad_value_."""
import torch


def maximise(generator, z, optimizer, steps):
    for _ in range(steps):
        score = generator(z).mean()
        optimizer.zero_grad()
        (-score).backward()
        torch.nn.utils.clip_grad_value_(score, 1.0)  # expect: SF417
        optimizer.step()
