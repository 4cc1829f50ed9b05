"""A GAN: a discriminator step and a generator step, each with its own optimizer, per iteration."""

import torch

torch.manual_seed(0)
generator = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
discriminator = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.LeakyReLU(0.2), torch.nn.Linear(16, 1))
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
bce = torch.nn.BCEWithLogitsLoss()
for it in range(100):
    real = torch.randn(16, 2) * 0.5 + 1.0
    fake = generator(torch.randn(16, 4))
    d_loss = bce(discriminator(real), torch.ones(16, 1)) + bce(discriminator(fake.detach()), torch.zeros(16, 1))
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = bce(discriminator(fake), torch.ones(16, 1))
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
