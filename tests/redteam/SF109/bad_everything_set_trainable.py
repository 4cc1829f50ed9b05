"""After adding LoRA the script sets requires_grad = True on every parameter "to be safe"."""
import torch
from torch import nn


class LoRA(nn.Module):
    def __init__(self, base, r=4):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x))


def prepare(model):
    model.classifier = LoRA(model.classifier)
    for p in model.parameters():
        p.requires_grad = True
    return torch.optim.SGD(list(model.parameters()), lr=0.01, momentum=0.9)  # expect: SF109
