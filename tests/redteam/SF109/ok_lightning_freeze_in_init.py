"""Lightning module that freezes the backbone in __init__ and adds adapters after."""
import lightning as L
import torch
from torch import nn


class Lora(nn.Module):
    def __init__(self, base, r=4):
        super().__init__()
        self.base = base
        self.a = nn.Linear(base.in_features, r, bias=False)
        self.b = nn.Linear(r, base.out_features, bias=False)

    def forward(self, x):
        return self.base(x) + self.b(self.a(x))


class Lit(L.LightningModule):
    def __init__(self, backbone):
        super().__init__()
        backbone.requires_grad_(False)
        backbone.classifier = Lora(backbone.classifier)
        self.backbone = backbone

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)
