"""math.isnan of a per-parameter mean in a helper the loop calls every step (bad)."""
import math

import torch


def find_nan_params(named):
    for label, w in named:
        if math.isnan(torch.mean(w)):  # expect: SF202
            print("nan parameter", label)


def run(model, loader, opt, device="cuda"):
    for xb, yb in loader:
        out = model(xb.to(device))
        loss = torch.nn.functional.l1_loss(out, yb.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        find_nan_params(model.named_parameters())
