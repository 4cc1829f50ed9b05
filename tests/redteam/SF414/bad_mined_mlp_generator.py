"""A GAN generator of stacked linear layers with leaky ReLUs and functional dropout between them."""
import torch.nn as nn
import torch.nn.functional as F


class Generator(nn.Module):
    def __init__(self, z_dim, out_dim):
        super().__init__()
        self.l1 = nn.Linear(z_dim, 256)
        self.l2 = nn.Linear(256, out_dim)

    def forward(self, z):
        h = F.leaky_relu(self.l1(z), 0.2)
        h = F.dropout(h, p=0.3)  # expect: SF414
        return F.tanh(self.l2(h))
