"""GAN: the generator's backward also fills D's gradients; D is cleared before G steps."""
import torch

opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
for real, _ in loader:
    fake = G(torch.randn(real.size(0), 100))
    opt_g.zero_grad()
    g_loss = adversarial(D(fake), valid)
    g_loss.backward()
    opt_d.zero_grad()
    opt_g.step()
    d_loss = (adversarial(D(real), valid) + adversarial(D(fake.detach()), invalid)) / 2
    d_loss.backward()
    opt_d.step()
