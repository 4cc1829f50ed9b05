"""loralib MergedLinear in a model class, one parameter group with every parameter."""
import loralib as lora
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.qkv = lora.MergedLinear(d, 3 * d, r=8, enable_lora=[True, False, True])
        self.out = nn.Linear(d, d)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return self.out(torch.softmax(q @ k.transpose(-1, -2), -1) @ v)


def configure(d, lr):
    net = Attention(d)
    groups = [{"params": net.parameters(), "weight_decay": 0.01}]
    return net, torch.optim.AdamW(groups, lr=lr)  # expect: SF109
