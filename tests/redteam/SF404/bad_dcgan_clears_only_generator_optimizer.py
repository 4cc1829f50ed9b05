"""DCGAN-style trainer function: the discriminator's optimizer steps every batch, but the only clear in
the loop is the generator's optimizer, whose parameters are the generator's alone (bad)."""
import torch
import torch.nn as nn


def train(netG, netD, loader, epochs, nz=100):
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    for epoch in range(epochs):
        for real, _ in loader:
            b = real.size(0)
            noise = torch.randn(b, nz, 1, 1)
            fake = netG(noise)
            errD = criterion(netD(real).view(-1), torch.ones(b)) + criterion(netD(fake.detach()).view(-1), torch.zeros(b))
            errD.backward()
            optimizerD.step()  # expect: SF404
            optimizerG.zero_grad()
            errG = criterion(netD(fake).view(-1), torch.ones(b))
            errG.backward()
            optimizerG.step()
