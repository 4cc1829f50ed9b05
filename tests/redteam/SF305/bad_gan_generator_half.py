"""A GAN script casts both networks with half(); each optimizer is built over one of them, no scaler."""
import torch

G = Generator(128).cuda().half()  # expect: SF305
D = Discriminator().cuda().half()  # expect: SF305
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
for real in loader:
    real = real.cuda().half()
    z = torch.randn(real.size(0), 128, device="cuda", dtype=torch.half)
    d_loss = torch.relu(1 - D(real)).mean() + torch.relu(1 + D(G(z).detach())).mean()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = -D(G(z)).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
