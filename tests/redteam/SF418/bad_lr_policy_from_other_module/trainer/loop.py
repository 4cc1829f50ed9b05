"""The loop asks policies.py for its schedule and advances it on every micro-batch."""
import torch

from trainer.policies import build_policy


def fit(model, loader, accum, total):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    lr_policy = build_policy(opt, 100, total)
    for i, batch in enumerate(loader):
        (model(**batch).loss / accum).backward()
        lr_policy.step()  # expect: SF418
        if (i + 1) % accum == 0:
            opt.step()
            opt.zero_grad()
