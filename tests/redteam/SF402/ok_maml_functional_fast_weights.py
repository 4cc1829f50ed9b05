"""MAML: fast weights are computed out of place from torch.autograd.grad, then the meta-optimizer steps; parameters are never modified in place by hand."""
import torch
from torch.func import functional_call


def maml_step(model, meta_opt, tasks, loss_fn, inner_lr=0.01):
    meta_opt.zero_grad()
    meta_loss = 0.0
    params = dict(model.named_parameters())
    for (xs, ys), (xq, yq) in tasks:
        support_loss = loss_fn(functional_call(model, params, (xs,)), ys)
        grads = torch.autograd.grad(support_loss, list(params.values()), create_graph=True)
        fast = {n: p - inner_lr * g for (n, p), g in zip(params.items(), grads)}
        meta_loss = meta_loss + loss_fn(functional_call(model, fast, (xq,)), yq)
    meta_loss.backward()
    meta_opt.step()
    return meta_loss.item()
