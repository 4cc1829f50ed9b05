"""`.clone().requires_grad_()` on a live output keeps its history (not a cut)."""
import torch.nn.functional as F


def step(model, x, y, opt):
    out = model(x).clone()
    loss = F.mse_loss(out, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
