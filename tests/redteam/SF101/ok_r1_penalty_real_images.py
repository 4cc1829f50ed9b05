"""Discriminator step with an R1 penalty: real images require grad, go through D, and autograd.grad differentiates w.r.t. them (legitimate)."""
import torch
import torch.nn.functional as F


def d_step(D, G, real, z, opt_d, gamma=10.0):
    real = real.detach().requires_grad_(True)
    real_logits = D(real)
    fake_logits = D(G(z).detach())
    adv = F.softplus(fake_logits).mean() + F.softplus(-real_logits).mean()
    (grad_real,) = torch.autograd.grad(outputs=real_logits.sum(), inputs=real, create_graph=True)
    r1 = grad_real.pow(2).flatten(1).sum(1).mean()
    loss = adv + 0.5 * gamma * r1
    opt_d.zero_grad()
    loss.backward()
    opt_d.step()
