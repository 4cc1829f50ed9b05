"""Gradients collected into a list before the step, then added back to the parameters through zip(params, grads) (bad)."""
import torch


def step_and_undo(model, optimizer, loss, lr):
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer.zero_grad()
    loss.backward()
    grads = [p.grad for p in params]
    optimizer.step()
    metrics = {"norm": sum(p.norm() for p in params).item()}
    with torch.no_grad():
        for p, g in zip(params, grads):
            p.add_(g, alpha=lr)  # expect: SF402
    return metrics
