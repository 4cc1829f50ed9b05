"""Mined (UNet on CIFAR-10 script): the training and validation losses both take the network output twice."""
import torch
from torch import nn, optim

unet = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 3, 3, padding=1))
crit = nn.MSELoss()
sgd = optim.SGD(unet.parameters(), lr=0.001, momentum=0.9)
train_batches = [(torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,)))]

for epoch in range(1):
    running = 0.0
    for pics, _ in train_batches:
        sgd.zero_grad()
        recon = unet(pics)
        loss = crit(recon, recon)  # expect: SF401
        loss.backward()
        sgd.step()
        running += loss.item()
