"""Gradients saved by name before an Adafactor step and added back to `dict(model.named_parameters())[name]` afterwards (bad)."""
import torch
from transformers.optimization import Adafactor


def step_then_undo(model, batch, lr=1e-3):
    optimizer = Adafactor(model.parameters(), lr=lr, relative_step=False, scale_parameter=False)
    model(**batch).loss.backward()
    saved_grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    optimizer.step()
    probe = model(**batch).loss.item()
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, g in saved_grads.items():
            params[name].add_(g, alpha=lr)  # expect: SF402
    return probe
