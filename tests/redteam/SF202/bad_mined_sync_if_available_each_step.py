"""Mined shape: one-line `if torch.cuda.is_available(): torch.cuda.synchronize()` around the backward of every step (availability is no interval gate) (bad)."""
import numpy as np
import torch
import torch.nn as nn


def fit(master_model, replay, optimizer, device, steps):
    for step in range(steps):
        batch_states, batch_targets = replay.sample()
        states = torch.tensor(np.array(batch_states), dtype=torch.float32, device=device)
        targets = torch.tensor(np.array(batch_targets), dtype=torch.float32, device=device)
        optimizer.zero_grad()
        loss = nn.MSELoss()(master_model(states), targets)
        if torch.cuda.is_available(): torch.cuda.synchronize()  # expect: SF202
        loss.backward()
        if torch.cuda.is_available(): torch.cuda.synchronize()  # expect: SF202
        torch.nn.utils.clip_grad_norm_(master_model.parameters(), max_norm=1.0)
        optimizer.step()
