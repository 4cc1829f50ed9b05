"""Per-task losses combined with torch.stack: the graph is kept."""
import torch
import torch.nn.functional as F


def step(net, x, y_cls, y_reg, opt):
    logits, reg = net(x)
    losses = torch.stack([F.cross_entropy(logits, y_cls), F.mse_loss(reg, y_reg)])
    opt.zero_grad()
    losses.sum().backward()
    opt.step()
    return torch.tensor([l.item() for l in losses])
