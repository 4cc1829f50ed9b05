"""Undo written as `torch.add(p.data, p.grad, alpha=lr, out=p.data)` after an SGD-with-momentum step (bad)."""
import torch


def probe(model, batch, lr=0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    optimizer.zero_grad()
    model(batch).logsumexp(-1).mean().backward()
    optimizer.step()
    value = model(batch).logsumexp(-1).mean().item()
    for p in model.parameters():
        torch.add(p.data, p.grad, alpha=lr, out=p.data)  # expect: SF402
    return value
