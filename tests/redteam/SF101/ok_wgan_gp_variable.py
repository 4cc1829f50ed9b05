"""WGAN-GP critic step: interpolates wrapped as Variable(requires_grad=True) and differentiated by autograd.grad (legitimate gradient penalty)."""
import torch
from torch import autograd
from torch.autograd import Variable


def critic_step(D, G, real, opt_d, z_dim=128, lambda_gp=10.0):
    z = torch.randn(real.size(0), z_dim, device=real.device)
    fake = G(z).detach()
    alpha = torch.rand(real.size(0), 1, 1, 1, device=real.device)
    interpolates = Variable(alpha * real + (1 - alpha) * fake, requires_grad=True)
    d_interp = D(interpolates)
    gradients = autograd.grad(outputs=d_interp, inputs=interpolates, grad_outputs=torch.ones_like(d_interp),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    gp = ((gradients.view(gradients.size(0), -1).norm(2, dim=1) - 1) ** 2).mean()
    d_loss = D(fake).mean() - D(real).mean() + lambda_gp * gp
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
