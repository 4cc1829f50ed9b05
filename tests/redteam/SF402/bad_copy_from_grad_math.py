"""Probe that undoes an AdamW step with `p.data.copy_(p.data + lr * p.grad)` (copy_ spelling of the same gradient-math undo, bad)."""
import torch


def lookahead_score(model, optimizer: torch.optim.AdamW, batch, lr):
    loss = model(batch).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    score = model(batch).mean().item()
    with torch.no_grad():
        for p in model.parameters():
            if p.grad is not None:
                p.data.copy_(p.data + lr * p.grad)  # expect: SF402
    return score
