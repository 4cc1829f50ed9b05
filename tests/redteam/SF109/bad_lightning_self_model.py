"""Lightning: the wrapped model holds LoRA layers built in __init__; configure_optimizers takes all of it."""
import pytorch_lightning as pl
import torch
from torch import nn


class LoraLinear(nn.Module):
    def __init__(self, linear, rank=4, alpha=8):
        super().__init__()
        self.linear = linear
        self.lora_down = nn.Linear(linear.in_features, rank, bias=False)
        self.lora_up = nn.Linear(rank, linear.out_features, bias=False)
        self.scale = alpha / rank

    def forward(self, x):
        return self.linear(x) + self.lora_up(self.lora_down(x)) * self.scale


class Module(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        net.proj = LoraLinear(net.proj)
        self.net = net

    def training_step(self, batch, batch_idx):
        return self.net(batch).mean()

    def configure_optimizers(self):
        return torch.optim.Adam(self.net.parameters(), lr=1e-4)  # expect: SF109
