"""Outputs kept for metrics are detached and moved to the CPU first."""
import torch.nn.functional as F


def train(model, loader, opt):
    outputs = []
    for x, y in loader:
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        outputs.append(logits.detach().cpu())
    return outputs
