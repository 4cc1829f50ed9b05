"""Input-gradient regularisation (double backprop): the input requires grad and the loss's gradient w.r.t. it is penalised (legitimate)."""
import torch
from torch.nn import functional as F


def robust_step(model, optimizer, x, y, lam=0.1):
    x = x.clone().requires_grad_(True)
    logits = model(x)
    ce = F.cross_entropy(logits, y)
    (g,) = torch.autograd.grad(ce, x, create_graph=True)
    loss = ce + lam * g.pow(2).sum(dim=(1, 2, 3)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
