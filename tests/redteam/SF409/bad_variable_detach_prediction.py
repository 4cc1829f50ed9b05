"""Legacy Variable around the detached decoder output, then MSE to the clean image (bad)."""
import torch.nn as nn
from torch.autograd import Variable

criterion = nn.MSELoss()


def denoise_step(encoder, decoder, noisy, clean, optimizer):
    recon = decoder(encoder(noisy))
    recon = Variable(recon.detach(), requires_grad=True)  # expect: SF409
    loss = criterion(recon, clean)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
