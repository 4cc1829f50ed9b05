"""Near miss of bad_mined_policy_grads_none_then_add: the flat gradient sum starts from 0 inside the batch loop, so
each batch adds the gradients of its two losses into a fresh tensor and only its norm outlives the pass (silent)."""
import torch


def gradient_norms(model, loader, task_loss, aux_loss):
    norms = []
    for x, y in loader:
        combined = 0
        model.zero_grad()
        task_loss(model(x), y).backward()
        combined += torch.cat([p.grad.reshape(-1) for p in model.parameters() if p.grad is not None])
        model.zero_grad()
        aux_loss(model(x)).backward()
        combined += torch.cat([p.grad.reshape(-1) for p in model.parameters() if p.grad is not None])
        norms.append(combined.norm().item())
    return norms
