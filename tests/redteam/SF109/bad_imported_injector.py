"""Adapters are injected by an imported helper whose module says so; no freeze in this file."""
import torch

from mylib.adapters import inject_adapters


def finetune(model, loader, epochs=1):
    inject_adapters(model, bottleneck=64)
    model = model.cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)  # expect: SF109
    for _ in range(epochs):
        for batch in loader:
            loss = model(**batch).loss
            opt.zero_grad()
            loss.backward()
            opt.step()
