"""Undo with the multi-tensor API `torch._foreach_add_(params, grads, alpha=lr)` after an AdamW step (bad)."""
import torch


def probe_entropy(model, optimizer, batch, lr, entropy_fn):
    loss = model(**batch).loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    ent = entropy_fn(model, batch)
    params = [p for p in model.parameters() if p.grad is not None]
    grads = [p.grad for p in params]
    with torch.no_grad():
        torch._foreach_add_(params, grads, alpha=lr)  # expect: SF402
    return ent


def build(model, lr):
    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
