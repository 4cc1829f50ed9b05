"""Hyperparameter trials: a new optimizer per trial, steps in the inner loop."""
import torch

for trial in range(n_trials):
    lr = sample_lr(trial)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for x in loader:
        optimizer.zero_grad()
        model(x).mean().backward()
        optimizer.step()
