"""SimCLR step passing the first view's projection twice to the NT-Xent loss (`nt_xent_loss(z_i, z_i)`), although z_j was computed (bad)."""
import torch
import torch.nn.functional as F


def nt_xent_loss(z_i, z_j, tau=0.5):
    z = F.normalize(torch.cat([z_i, z_j]), dim=1)
    sim = z @ z.T / tau
    sim.fill_diagonal_(float("-inf"))
    n = z_i.size(0)
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
    return F.cross_entropy(sim, targets)


def simclr_step(encoder, projector, optimizer, x_i, x_j):
    z_i = projector(encoder(x_i))
    z_j = projector(encoder(x_j))
    loss = nt_xent_loss(z_i, z_i)  # expect: SF401
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
