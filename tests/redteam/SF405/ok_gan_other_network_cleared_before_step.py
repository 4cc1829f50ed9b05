"""GAN: after the generator's backward, the discriminator's optimizer (disjoint parameters) is cleared
to drop the gradients the generator loss left in it, then the generator steps (correct)."""
import torch


def gan_step(G, D, opt_g, real, z):
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
    g_opt = torch.optim.Adam(G.parameters(), lr=2e-4)
    g_opt.zero_grad()
    g_loss = -D(G(z)).mean()
    g_loss.backward()
    opt_d.zero_grad()
    g_opt.step()
