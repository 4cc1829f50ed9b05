"""Undo over `optimizer.param_groups[0]["params"]` indexed directly, with the group's lr, after a Lion-style optimizer step (bad)."""
import torch
from lion_pytorch import Lion


def one_step_probe(model, batch, lr=1e-4):
    optimizer = Lion(model.parameters(), lr=lr, weight_decay=1e-2)
    model(batch).sum().backward()
    optimizer.step()
    score = model(batch).sum().item()
    group = optimizer.param_groups[0]
    with torch.no_grad():
        for p in group["params"]:
            p.add_(group["lr"] * p.grad)  # expect: SF402
    return score
