"""HF Trainer builds the optimizer itself from every parameter that requires grad: none was frozen."""
import torch
from torch import nn
from transformers import Trainer


class Lora(nn.Module):
    def __init__(self, base, r=8):
        super().__init__()
        self.base = base
        self.A = nn.Linear(base.in_features, r, bias=False)
        self.B = nn.Linear(r, base.out_features, bias=False)

    def forward(self, x):
        return self.base(x) + self.B(self.A(x))


def train(model, args, ds):
    for layer in model.layers:
        layer.attn.q = Lora(layer.attn.q)
    trainer = Trainer(model=model, args=args, train_dataset=ds)  # expect: SF109
    trainer.train()
