"""Per-parameter gradient norms accumulated as Python floats, not tensors the size of the parameter."""


def grad_norm_profile(model, loader):
    totals = {n: 0.0 for n, _ in model.named_parameters()}
    for x, y in loader:
        model.zero_grad()
        model.loss(x, y).backward()
        for n, p in model.named_parameters():
            if p.grad is not None:
                totals[n] += p.grad.norm().item()
    return totals
