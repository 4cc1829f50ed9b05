"""Mined (an image autoencoder experiment): the model moved and cast with .to(device).half(), trained with Adam on an MSE loss."""
import torch
import torch.nn.functional as F


def run(loader):
    net = ConvAutoEncoder().to("cuda:0").half()  # expect: SF305
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for step, (noisy, clean) in enumerate(loader):
        recon = net(noisy.cuda().half())
        loss = F.mse_loss(recon, clean.cuda().half())
        opt.zero_grad()
        loss.backward()
        opt.step()
