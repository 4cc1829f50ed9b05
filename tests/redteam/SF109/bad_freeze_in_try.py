"""The base is frozen inside a `try`: when the helper raises, the whole model trains."""
import torch
import torch.nn as nn


class LoRA(nn.Module):
    def __init__(self, base, r=8):
        super().__init__()
        self.base = base
        self.a = nn.Parameter(torch.zeros(r, base.in_features))
        self.b = nn.Parameter(torch.zeros(base.out_features, r))

    def forward(self, x):
        return self.base(x) + (x @ self.a.t()) @ self.b.t()


def build(model, log):
    model.head = LoRA(model.head)
    try:
        for n, p in model.named_parameters():
            if ".a" not in n and ".b" not in n:
                p.requires_grad = False
    except RuntimeError:
        log.warning("could not freeze the base")
    return torch.optim.AdamW(model.parameters(), lr=1e-4)  # expect: SF109
