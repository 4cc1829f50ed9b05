"""An empty dict filled with one zero buffer per named parameter, then summed into per batch."""
import torch


def gradient_norms(model, batches, loss_fn):
    accum = {}
    for name, param in model.named_parameters():
        accum[name] = torch.zeros_like(param)  # expect: SF105
    for batch in batches:
        model.zero_grad(set_to_none=True)
        loss_fn(model, batch).backward()
        for name, param in model.named_parameters():
            accum[name].add_(param.grad)
    return {name: g.norm().item() for name, g in accum.items()}
