"""The clip receives a list of trainable parameters kept aside; gated step with `== accum - 1`."""
import torch


def train(model, loader, opt, accum=2):
    params = [p for p in model.parameters() if p.requires_grad]
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.l1_loss(model(x), y) / accum
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 5.0)  # expect: SF418
        if i % accum == accum - 1:
            opt.step()
            opt.zero_grad()
