"""Script: everything under `if __name__ == "__main__":`; the freeze assigns a name test to requires_grad."""
import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base, r=8):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x))


if __name__ == "__main__":
    model = build_model()
    model.proj = LoRALinear(model.proj)
    for name, param in model.named_parameters():
        param.requires_grad = "lora_" in name
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
