"""Truncated BPTT: the same-file `repackage_hidden` detaches the state every batch (correct)."""
import torch


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def train(model, batches, crit, opt, bs):
    hidden = model.init_hidden(bs)
    for data, targets in batches:
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = crit(output, targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
