"""Energy-based model training: negative samples require grad for Langevin dynamics (autograd.grad w.r.t. them), the contrastive loss uses detached samples (legitimate)."""
import torch


def langevin(ebm, x, steps=20, step_size=10.0, noise=0.005):
    x = x.detach().requires_grad_(True)
    for _ in range(steps):
        energy = ebm(x).sum()
        grad = torch.autograd.grad(energy, x)[0]
        x = (x - step_size * grad + noise * torch.randn_like(x)).detach().requires_grad_(True)
    return x.detach()


def ebm_step(ebm, optimizer, real, buffer_sample):
    neg = langevin(ebm, buffer_sample)
    loss = ebm(real).mean() - ebm(neg).mean() + 0.1 * (ebm(real) ** 2 + ebm(neg) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return neg
