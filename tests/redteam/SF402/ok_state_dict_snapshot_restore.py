"""Try-step-then-revert done right: model and optimizer state_dicts are deep-copied before the step and loaded back if the loss got worse (legitimate)."""
import copy

import torch


def guarded_step(model, optimizer, closure):
    optimizer.zero_grad()
    old_loss = closure()
    old_loss.backward()
    model_backup = copy.deepcopy(model.state_dict())
    optim_backup = copy.deepcopy(optimizer.state_dict())
    optimizer.step()
    with torch.no_grad():
        new_loss = closure()
    if new_loss > old_loss:
        model.load_state_dict(model_backup)
        optimizer.load_state_dict(optim_backup)
    return min(old_loss.item(), new_loss.item())
